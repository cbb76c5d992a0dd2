import { describe, it, beforeEach, afterEach } from 'vitest';
import { createTestDir, cleanupTestDir, setupFiles, compareOutputs } from './fixture-runner.js';

describe('grep command - Real Bash Comparison', () => {
  let testDir: string;

  beforeEach(async () => {
    testDir = await createTestDir();
  });

  afterEach(async () => {
    await cleanupTestDir(testDir);
  });

  it('should match basic grep', async () => {
    const env = await setupFiles(testDir, {
      'test.txt': 'hello world\n',
    });
    await compareOutputs(env, testDir, 'grep hello test.txt');
  });

  // TODO: grep exit code behavior differs from real bash
  it.skip('should match with no results', async () => {
    const env = await setupFiles(testDir, {
      'test.txt': 'hello world\n',
    });
    await compareOutputs(env, testDir, 'grep notfound test.txt || true');
  });
});
