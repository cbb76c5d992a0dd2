export interface FsEntry {
  type: 'file' | 'directory';
  content?: string;
  mode: number;
}

export class VirtualFs {
  private data: Map<string, FsEntry> = new Map();

  constructor(initialFiles?: Record<string, string>) {
    this.data.set('/', { type: 'directory', mode: 0o755 });
    if (initialFiles) {
      for (const [path, content] of Object.entries(initialFiles)) {
        this.writeFileSync(path, content);
      }
    }
  }

  async mkdir(path: string, options?: { recursive?: boolean }): Promise<void> {
    // Implementation
  }

  // TODO: Add mkdirSync for synchronous directory creation

  async readdir(path: string): Promise<string[]> {
    // Returns entries without . and ..
    return [];
  }
}
