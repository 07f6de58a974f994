import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..', '..');

/** The documents that describe the code by its paths: what they name must be there. */
const DOCUMENTS = ['docs/architecture.md', 'docs/extending.md'];

/**
 * Files the guides ask the reader to write ("say an admin can expire a user's password"): they
 * are examples, so they must not exist.
 */
const EXAMPLES = ['src/application/admin/expire-password.use-case.ts', 'src/adapters/mail/http-api-mail-transport.ts'];

/** Every `src/…` or `test/…` path in a text, prose and code blocks alike, without trailing punctuation. */
function pathsNamed(text: string): string[] {
  const found = [...text.matchAll(/(?<![\w./-])((?:src|test)\/[\w.*<>/-]*)/g)].map((m) => m[1].replace(/[.,:;/]+$/, ''));
  return [...new Set(found)];
}

function filesUnder(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = `${dir}/${entry.name}`;
    return entry.isDirectory() ? filesUnder(path) : [path];
  });
}

const FILES = [...filesUnder('src'), ...filesUnder('test')];

/**
 * Whether a named path is in the tree: a file or folder; a glob that matches a file; for `<name>`
 * placeholders, the folder before them; a file named without its extension, as Jest is given one
 * (`test/e2e/auth` for `test/e2e/auth.e2e-spec.ts`).
 */
function resolves(path: string, files: readonly string[] = FILES, exists = (p: string) => existsSync(join(ROOT, p))): boolean {
  if (path.includes('<')) {
    const folder = path.slice(0, path.lastIndexOf('/', path.indexOf('<')));
    return exists(folder);
  }
  if (path.includes('*')) {
    const pattern = path
      .replace(/[.+?^${}()|[\]\\]/g, '\\$&')
      .replace(/\*\*\//g, '\u0000')
      .replace(/\*\*/g, '\u0001')
      .replace(/\*/g, '[^/]*')
      .replace(/\u0000/g, '(?:.+/)?')
      .replace(/\u0001/g, '.*');
    return files.some((file) => new RegExp(`^${pattern}$`).test(file));
  }
  return exists(path) || files.some((file) => file.startsWith(`${path}.`));
}

describe.each(DOCUMENTS)('the paths %s names', (document) => {
  const named = pathsNamed(readFileSync(join(ROOT, document), 'utf8'));

  it('are found', () => {
    expect(named.length).toBeGreaterThan(5);
  });

  it('exist in the tree (a file, a folder, a glob with a match, the folder of a <placeholder>)', () => {
    expect(named.filter((path) => !EXAMPLES.includes(path) && !resolves(path))).toEqual([]);
  });

  it('include no example file that has come to exist', () => {
    expect(named.filter((path) => EXAMPLES.includes(path) && resolves(path))).toEqual([]);
  });
});

describe('reading paths out of a document', () => {
  it('takes src/ and test/ paths from prose and code, without the punctuation after them', () => {
    const text =
      'Bind it in `src/modules/a.module.ts`. See src/app.module.ts, and (test/unit/**/*.spec.ts) or src/modules/<feature>.module.ts: done; not asrc/x';
    expect(pathsNamed(text)).toEqual([
      'src/modules/a.module.ts',
      'src/app.module.ts',
      'test/unit/**/*.spec.ts',
      'src/modules/<feature>.module.ts',
    ]);
  });

  it('tells a missing file, a glob without a match and a placeholder in a missing folder', () => {
    const files = ['src/modules/a.module.ts', 'test/unit/docs/x.spec.ts'];
    const exists = (p: string) => ['src/modules', 'src/modules/a.module.ts', 'test/unit'].includes(p);
    expect(resolves('src/modules/a.module.ts', files, exists)).toBe(true);
    expect(resolves('src/modules/b.module.ts', files, exists)).toBe(false);
    expect(resolves('test/unit/**/*.spec.ts', files, exists)).toBe(true);
    expect(resolves('test/e2e/**/*.spec.ts', files, exists)).toBe(false);
    expect(resolves('src/**', files, exists)).toBe(true);
    expect(resolves('test/unit/docs/x', files, exists)).toBe(true);
    expect(resolves('test/unit/docs/y', files, exists)).toBe(false);
    expect(resolves('src/modules/<feature>.module.ts', files, exists)).toBe(true);
    expect(resolves('src/nowhere/<feature>.ts', files, exists)).toBe(false);
  });
});
