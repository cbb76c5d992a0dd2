export interface ExecResult {
  stdout: string;
  stderr: string;
  exitCode: number;
}

export interface Command {
  name: string;
  execute(args: string[], ctx: CommandContext): Promise<ExecResult>;
}

export interface CommandContext {
  cwd: string;
  fs: VirtualFs;
  stdin: string;
  env: Record<string, string>;
}
