import { describe, it, beforeEach, afterEach } from 'vitest';
import { createTestDir, cleanupTestDir, setupFiles, compareOutputs } from './fixture-runner.js';

describe('ls command - Real Bash Comparison', () => {
  let testDir: string;

  beforeEach(async () => {
    testDir = await createTestDir();
  });

  afterEach(async () => {
    await cleanupTestDir(testDir);
  });

  it('should match directory listing', async () => {
    const env = await setupFiles(testDir, {
      'file1.txt': 'content',
      'file2.txt': 'content',
    });
    await compareOutputs(env, testDir, 'ls');
  });

  // TODO: ls -a includes . and .. which BashEnv doesn't have
  it.skip('should match -a (show hidden)', async () => {
    const env = await setupFiles(testDir, {
      '.hidden': '',
      'visible.txt': '',
    });
    await compareOutputs(env, testDir, 'ls -a');
  });

  // TODO: ls -A output order differs between BashEnv and real bash
  it.skip('should match -A (show hidden except . and ..)', async () => {
    const env = await setupFiles(testDir, {
      '.hidden': '',
      'visible.txt': '',
    });
    await compareOutputs(env, testDir, 'ls -A');
  });

  // TODO: ls -R output format differs between BashEnv and real bash
  it.skip('should match -R (recursive)', async () => {
    const env = await setupFiles(testDir, {
      'file.txt': '',
      'dir/file1.txt': '',
      'dir/sub/file2.txt': '',
    });
    await compareOutputs(env, testDir, 'ls -R');
  });
});
