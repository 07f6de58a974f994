import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataDirInUseError, lockDataDir } from '../../../src/adapters/persistence/data-dir-lock';

describe('lockDataDir: the embedded database is one process’s at a time', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'identity-lock-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('refuses a second holder while the first process lives, naming it', async () => {
    const other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)']);
    try {
      writeFileSync(join(dir, 'identity-service.pid'), String(other.pid));
      expect(() => lockDataDir(dir)).toThrow(DataDirInUseError);
      expect(() => lockDataDir(dir)).toThrow(`(pid ${other.pid})`);
    } finally {
      other.kill('SIGKILL');
    }
  });

  it('takes over a lock whose process is gone, and releases it', async () => {
    const gone = spawn(process.execPath, ['-e', '0']);
    await new Promise((resolve) => gone.once('exit', resolve));
    writeFileSync(join(dir, 'identity-service.pid'), String(gone.pid));
    const release = lockDataDir(dir);
    expect(readFileSync(join(dir, 'identity-service.pid'), 'utf8')).toBe(String(process.pid));
    release();
    expect(existsSync(join(dir, 'identity-service.pid'))).toBe(false);
    // Free again: a later process (here, this one) takes it.
    lockDataDir(dir)();
  });
});
