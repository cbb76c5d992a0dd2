import { Command, CommandContext, ExecResult } from '../../types.js';

export const lsCommand: Command = {
  name: 'ls',

  async execute(args: string[], ctx: CommandContext): Promise<ExecResult> {
    let showAll = false;
    let showAlmostAll = false;
    let longFormat = false;
    let recursive = false;

    // Parse arguments
    for (const arg of args) {
      if (arg.startsWith('-')) {
        for (const flag of arg.slice(1)) {
          if (flag === 'a') showAll = true;
          else if (flag === 'A') showAlmostAll = true;
          else if (flag === 'l') longFormat = true;
          else if (flag === 'R') recursive = true;
        }
      }
    }

    const showHidden = showAll || showAlmostAll;
    // TODO: Add . and .. entries when showAll is true (but not showAlmostAll)
    // TODO: Fix recursive listing format to match real bash

    try {
      let entries = await ctx.fs.readdir(ctx.cwd);
      if (!showHidden) {
        entries = entries.filter(e => !e.startsWith('.'));
      }
      return { stdout: entries.join('\n') + '\n', stderr: '', exitCode: 0 };
    } catch {
      return { stdout: '', stderr: 'ls: error\n', exitCode: 1 };
    }
  },
};
