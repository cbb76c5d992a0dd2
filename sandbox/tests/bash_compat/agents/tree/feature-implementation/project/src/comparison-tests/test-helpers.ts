import { Bash } from '../BashEnv.js';
import { exec } from 'child_process';
import { promisify } from 'util';
import * as fs from 'fs/promises';
import * as path from 'path';

export const execAsync = promisify(exec);

export async function createTestDir(): Promise<string> {
  const testDir = path.join('/tmp', 'bashenv-test-' + Date.now());
  await fs.mkdir(testDir, { recursive: true });
  return testDir;
}

export async function cleanupTestDir(testDir: string): Promise<void> {
  await fs.rm(testDir, { recursive: true, force: true });
}

export async function setupFiles(
  testDir: string,
  files: Record<string, string>
): Promise<Bash> {
  for (const [filePath, content] of Object.entries(files)) {
    const fullPath = path.join(testDir, filePath);
    await fs.mkdir(path.dirname(fullPath), { recursive: true });
    await fs.writeFile(fullPath, content);
  }

  const bashEnvFiles: Record<string, string> = {};
  for (const [filePath, content] of Object.entries(files)) {
    bashEnvFiles[path.join(testDir, filePath)] = content;
  }

  return new Bash({
    files: bashEnvFiles,
    cwd: testDir,
  });
}

export async function compareOutputs(
  env: Bash,
  testDir: string,
  command: string
): Promise<void> {
  const [bashEnvResult, realBashResult] = await Promise.all([
    env.exec(command),
    runRealBash(command, testDir),
  ]);

  if (bashEnvResult.stdout !== realBashResult.stdout) {
    throw new Error('stdout mismatch');
  }
}

async function runRealBash(command: string, cwd: string) {
  const { stdout, stderr } = await execAsync(command, { cwd, shell: '/bin/bash' });
  return { stdout, stderr, exitCode: 0 };
}
