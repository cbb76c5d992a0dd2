import { ProductRepository } from '../repositories/product';
import { logger } from '../utils/logger';

export class InventoryService {
  private productRepo: ProductRepository;

  constructor() {
    this.productRepo = new ProductRepository();
  }

  async checkAvailability(productId: string, quantity: number): Promise<boolean> {
    const product = await this.productRepo.findById(productId);
    if (!product) {
      logger.warn(`Product not found: ${productId}`);
      return false;
    }
    return product.stock >= quantity;
  }

  async reserve(productId: string, quantity: number): Promise<void> {
    const product = await this.productRepo.findById(productId);
    if (!product || product.stock < quantity) {
      throw new Error(`Cannot reserve ${quantity} units of ${productId}`);
    }

    product.stock -= quantity;
    await this.productRepo.update(product);
    logger.info(`Reserved ${quantity} units of ${productId}`);
  }

  async release(productId: string, quantity: number): Promise<void> {
    const product = await this.productRepo.findById(productId);
    if (product) {
      product.stock += quantity;
      await this.productRepo.update(product);
      logger.info(`Released ${quantity} units of ${productId}`);
    }
  }
}
