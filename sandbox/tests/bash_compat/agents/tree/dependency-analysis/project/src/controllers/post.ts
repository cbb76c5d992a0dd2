import { Database } from '../db';
import { logger } from '../utils/logger';
import { slugify, formatDate } from '../utils/helpers';

export class PostController {
  constructor(private db: Database) {}

  createPost(title: string, content: string) {
    const slug = slugify(title);
    logger.info(`Creating post: ${slug}`);
    return { slug, title, content, createdAt: formatDate(new Date()) };
  }
}
