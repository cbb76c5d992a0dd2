import { VirtualFs } from './fs.js';
import { Command, CommandContext, ExecResult } from './types.js';
import { lsCommand } from './commands/ls/ls.js';
import { findCommand } from './commands/find/find.js';
import { grepCommand } from './commands/grep/grep.js';

export class BashEnv {
  private fs: VirtualFs;
  private cwd: string;
  private commands: Map<string, Command> = new Map();

  constructor(options: BashOptions = {}) {
    this.fs = new VirtualFs(options.files);
    this.cwd = options.cwd || '/';

    // Register built-in commands
    this.registerCommand(lsCommand);
    this.registerCommand(findCommand);
    this.registerCommand(grepCommand);
    // TODO: Add true and false commands
  }

  registerCommand(command: Command): void {
    this.commands.set(command.name, command);
  }

  async exec(command: string): Promise<ExecResult> {
    // Command execution logic
    return { stdout: '', stderr: '', exitCode: 0 };
  }
}
