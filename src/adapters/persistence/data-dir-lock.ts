import { closeSync, mkdirSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** The embedded database is one process's at a time; this file names the process that has it. */
const LOCK_FILE = 'identity-service.pid';

/** Thrown when another live process (a running server, usually) has the embedded database open. */
export class DataDirInUseError extends Error {
  constructor(dataDir: string, pid: number) {
    super(
      `The embedded database in ${dataDir} is in use by another process (pid ${pid}), most likely a running ` +
        'server. Stop it first, or use that server over HTTP; several processes need DATABASE_URL (a PostgreSQL server).',
    );
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Takes the embedded database directory for this process; returns the release. A lock left by a
 * process that no longer runs (a crash) is taken over.
 * @throws DataDirInUseError while another live process holds it
 */
export function lockDataDir(dataDir: string): () => void {
  mkdirSync(dataDir, { recursive: true });
  const file = join(dataDir, LOCK_FILE);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(file, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return () => {
        try {
          if (readFileSync(file, 'utf8').trim() === String(process.pid)) unlinkSync(file);
        } catch {
          // already gone
        }
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = Number.parseInt(readFileSync(file, 'utf8'), 10);
      if (Number.isInteger(holder) && holder !== process.pid && alive(holder)) throw new DataDirInUseError(resolve(dataDir), holder);
      unlinkSync(file); // stale: its process is gone
    }
  }
  throw new DataDirInUseError(resolve(dataDir), Number.NaN);
}
