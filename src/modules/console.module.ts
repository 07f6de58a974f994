import { Logger, MiddlewareConsumer, Module, NestModule, RequestMethod } from '@nestjs/common';
import { builtConsoleDir, ConsolePages } from '../adapters/http/console/console-pages';
import { RealmRepository } from '../application/ports/realm.repository';
import { AppConfig } from '../config/app-config';

/**
 * The account console: the end user's pages (sign-in with the second factor, sign-up, password
 * reset, email verification, profile, sessions, security), built from console/ into dist/console
 * and served from the service's own origin. `ACCOUNT_CONSOLE=false` leaves them out.
 */
@Module({})
export class ConsoleModule implements NestModule {
  private readonly logger = new Logger('Console');

  constructor(
    private readonly config: AppConfig,
    private readonly realms: RealmRepository,
  ) {}

  configure(consumer: MiddlewareConsumer): void {
    if (!this.config.accountConsole) return;
    const dir = this.config.accountConsoleDir ?? builtConsoleDir();
    const pages = ConsolePages.load(dir);
    if (!pages) {
      this.logger.warn(`The account console is not built (no ${dir}/index.html): npm run build`);
      return;
    }
    const get = (path: string) => ({ path, method: RequestMethod.GET });
    const realmName = async (id: string) => (await this.realms.findById(id))?.name ?? null;
    consumer.apply(pages.handler(realmName)).forRoutes(get('account'), get('account/{*rest}'), get('verify-email'), get('reset-password'));
  }
}
