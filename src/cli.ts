import 'reflect-metadata';
import { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { CreateAdminUseCase } from './application/admin/create-admin.use-case';
import { CreateRealmUseCase } from './application/admin/create-realm.use-case';
import { GetRealmUseCase } from './application/admin/get-realm.use-case';
import { ListRealmsUseCase } from './application/admin/list-realms.use-case';
import { RotateSigningKeysUseCase } from './application/admin/rotate-signing-keys.use-case';
import { UpdateRealmUseCase } from './application/admin/update-realm.use-case';
import { CreateClientUseCase } from './application/clients/create-client.use-case';
import { ListClientsUseCase } from './application/clients/list-clients.use-case';
import { CreateRoleUseCase } from './application/roles/create-role.use-case';
import { DeleteRoleUseCase } from './application/roles/delete-role.use-case';
import { ListRolesUseCase } from './application/roles/list-roles.use-case';
import { Clock } from './application/ports/clock';
import { SecureTokens } from './application/ports/secure-tokens';
import { presentClients } from './adapters/http/client-presenters';
import { present } from './adapters/http/presenters';
import { TypeOrmSigningKeyStore } from './adapters/persistence/typeorm-signing-key-store';
import { AppModule } from './app.module';
import { AppConfig } from './config/app-config';
import { ConfigError, loadConfig } from './config/load-config';
import { DomainError } from './domain/errors';

export const USAGE = `Usage: npm run cli -- <command>

Commands:
  create-realm <id> <name>              create a realm (id: ^[a-z0-9][a-z0-9-]{0,62}$)
  create-admin <realm> <email> [--super] [--existing]
                                        create a realm-admin of <realm>, or with --super a
                                        super-admin of master. The password is ADMIN_PASSWORD,
                                        or generated and printed once. An address that already
                                        has an account is refused: its creator chose its
                                        password. --existing grants the role to that account
                                        anyway, keeping its password, factors and sessions
  rotate-keys [--force]                 make a new signing key current; the JWKS keeps the
                                        previous one until the tokens it signed expire.
                                        Refused while the current key is younger than the
                                        longest access-token lifetime (a second rotation would
                                        drop a key that live tokens need) unless --force
  realm-settings <realm> [key=value ...]
                                        show a realm's settings (every value in force), or
                                        change them: keys as in GET /v1/admin/realm, nested
                                        ones dotted (lockout.maxFailures=5, webauthn.origins=
                                        https://a.example,https://b.example), plus name and
                                        enabled; the value "default" returns a setting to the
                                        deployment default
  roles <realm>                         list the realm's roles: the built-ins, then its own
  create-role <realm> <name> [description]
                                        define a role (name: ^[a-z][a-z0-9:._-]{0,63}$) so
                                        that administrators can assign it
  delete-role <realm> <name>            delete a defined role; every user of the realm who
                                        holds it loses it (their next token no longer has it)
  clients list <realm> [--json]         list the realm's OpenID provider clients (never a secret)
  clients create <realm> <name> --type=public|confidential [options]
                                        register a client as POST /v1/admin/clients does; prints
                                        its id and, for a confidential client, its secret (once).
                                        Options, repeatable where a list: --redirect-uri=URI
                                        --post-logout-redirect-uri=URI --grant=TYPE --scope=NAME
                                        --resource=IDENTIFIER (lists also comma-separated, but
                                        URIs one per option) --first-party
                                        --backchannel-logout-uri=URI --jwks-uri=URI
                                        --token-endpoint-auth-method=METHOD
                                        --id-token-alg=RS256|ES256 --access-token-ttl=SECONDS
                                        --json (the client and its secret as JSON)
`;

export interface CliIo {
  out(line: string): void;
  err(line: string): void;
  /** The password for create-admin; generated when absent. */
  adminPassword?: string;
}

/**
 * Runs one command against an application context of AppModule (no HTTP) and returns the exit
 * code: 0 done, 1 refused (the message says why), 2 usage error.
 */
export async function runCli(argv: string[], app: INestApplicationContext, io: CliIo): Promise<number> {
  const [command, ...rest] = argv;
  const flags = rest.filter((arg) => arg.startsWith('--'));
  const args = rest.filter((arg) => !arg.startsWith('--'));
  const usage = (problem: string) => {
    io.err(`${problem}\n\n${USAGE}`);
    return 2;
  };
  try {
    switch (command) {
      case 'create-realm': {
        if (args.length !== 2 || flags.length) return usage('create-realm takes <id> <name>');
        const realm = await app.get(CreateRealmUseCase).execute({ id: args[0], name: args[1], actorId: null, ip: null });
        io.out(`Created realm "${realm.id}" (${realm.name})`);
        return 0;
      }
      case 'create-admin': {
        const unknown = flags.filter((flag) => flag !== '--super' && flag !== '--existing');
        if (args.length !== 2 || unknown.length) return usage('create-admin takes <realm> <email> [--super] [--existing]');
        const generated = io.adminPassword ? null : app.get(SecureTokens).generate();
        const result = await app.get(CreateAdminUseCase).execute({
          realmId: args[0],
          email: args[1],
          superAdmin: flags.includes('--super'),
          grantExisting: flags.includes('--existing'),
          password: io.adminPassword ?? (generated as string),
        });
        if (!result.created) {
          io.out(`${result.user.email} already exists in realm "${result.user.realmId}": granted ${result.role}; password unchanged`);
          return 0;
        }
        io.out(`Created ${result.role} ${result.user.email} in realm "${result.user.realmId}" (id ${result.user.id})`);
        if (generated) io.out(`Generated password (shown once, store it now): ${generated}`);
        return 0;
      }
      case 'rotate-keys': {
        if (args.length || flags.some((flag) => flag !== '--force')) return usage('rotate-keys takes only [--force]');
        if (!flags.includes('--force')) {
          // The JWKS publishes the current and the previous key only.
          const wait = await secondsUntilRotationIsSafe(app);
          if (wait > 0) {
            io.err(
              `The current signing key is younger than the longest access-token lifetime: rotating now would retire the key of tokens that are still valid. Retry in ${wait} s, or pass --force.`,
            );
            return 1;
          }
        }
        const kid = await app.get(RotateSigningKeysUseCase).execute();
        io.out(`New signing key ${kid} is current; the previous key stays in the JWKS`);
        return 0;
      }
      case 'realm-settings': {
        if (args.length < 1 || flags.length) return usage('realm-settings takes <realm> [key=value ...]');
        const [realmId, ...assignments] = args;
        const realm =
          assignments.length === 0
            ? await app.get(GetRealmUseCase).execute(realmId)
            : await app.get(UpdateRealmUseCase).execute({ realmId, ...parseAssignments(assignments), actorId: null, ip: null });
        io.out(JSON.stringify(present.realm(realm), null, 2));
        return 0;
      }
      case 'roles': {
        if (args.length !== 1 || flags.length) return usage('roles takes <realm>');
        const realm = await app.get(GetRealmUseCase).execute(args[0]);
        for (const role of await app.get(ListRolesUseCase).execute({ realm })) {
          io.out(`${role.name}${role.builtIn ? ' (built in)' : ''}${role.description ? ` — ${role.description}` : ''}`);
        }
        return 0;
      }
      case 'create-role': {
        if (args.length < 2 || args.length > 3 || flags.length) return usage('create-role takes <realm> <name> [description]');
        const realm = await app.get(GetRealmUseCase).execute(args[0]);
        const role = await app.get(CreateRoleUseCase).execute({ actor: null, realmId: realm.id, name: args[1], description: args[2] });
        io.out(`Created role "${role.name}" in realm "${realm.id}"`);
        return 0;
      }
      case 'delete-role': {
        if (args.length !== 2 || flags.length) return usage('delete-role takes <realm> <name>');
        const realm = await app.get(GetRealmUseCase).execute(args[0]);
        const { users } = await app.get(DeleteRoleUseCase).execute({ actor: null, realmId: realm.id, name: args[1] });
        io.out(`Deleted role "${args[1]}" from realm "${realm.id}"; ${users} user${users === 1 ? '' : 's'} held it`);
        return 0;
      }
      case 'clients': {
        const [sub, ...words] = args;
        if (sub === 'list') {
          if (words.length !== 1 || flags.some((flag) => flag !== '--json')) return usage('clients list takes <realm> [--json]');
          const realm = await app.get(GetRealmUseCase).execute(words[0]);
          const clients = (await app.get(ListClientsUseCase).execute({ realmId: realm.id })).map(presentClients.client);
          if (flags.includes('--json')) io.out(JSON.stringify(clients, null, 2));
          else for (const client of clients) io.out(clientLine(client));
          return 0;
        }
        if (sub === 'create') {
          if (words.length !== 2) return usage('clients create takes <realm> <name> --type=public|confidential [options]');
          const options = parseClientOptions(flags);
          if (typeof options === 'string') return usage(options);
          const { json, ...fields } = options;
          const realm = await app.get(GetRealmUseCase).execute(words[0]);
          const { client, clientSecret } = await app
            .get(CreateClientUseCase)
            .execute({ actor: null, registeredBy: 'admin', realmId: realm.id, name: words[1], ...fields });
          const shown = presentClients.client(client);
          if (json) io.out(JSON.stringify({ client: shown, ...(clientSecret !== null ? { clientSecret } : {}) }, null, 2));
          else {
            io.out(`Created ${shown.type} client "${shown.name}" in realm "${realm.id}"`);
            io.out(`Client id: ${shown.clientId}`);
            if (clientSecret !== null) io.out(`Client secret (shown once, store it now): ${clientSecret}`);
          }
          return 0;
        }
        return usage('clients takes list <realm> or create <realm> <name> --type=public|confidential [options]');
      }
      case undefined:
      case 'help':
      case '--help':
        io.out(USAGE);
        return command === undefined ? 2 : 0;
      default:
        return usage(`Unknown command "${command}"`);
    }
  } catch (error) {
    if (error instanceof DomainError) {
      io.err(`${error.code}: ${error.message}`);
      return 1;
    }
    throw error;
  }
}

/**
 * `key=value` words as a realm change: dotted keys nest, `default` (or `null`) resets, numbers and
 * booleans are read as such, `webauthn.origins` is a comma-separated list. Ranges and unknown
 * keys are the domain's to judge, as for a REST request.
 */
export function parseAssignments(words: string[]): { name?: string; enabled?: boolean; settings?: Record<string, unknown> } {
  const change: { name?: string; enabled?: boolean; settings?: Record<string, unknown> } = {};
  for (const word of words) {
    const at = word.indexOf('=');
    if (at < 1) throw DomainError.validation(word, 'must be key=value');
    const key = word.slice(0, at);
    const raw = word.slice(at + 1);
    if (key === 'name') {
      change.name = raw;
      continue;
    }
    if (key === 'enabled') {
      if (raw !== 'true' && raw !== 'false') throw DomainError.validation('enabled', 'must be true or false');
      change.enabled = raw === 'true';
      continue;
    }
    let value: unknown = raw;
    if (raw === 'default' || raw === 'null') value = null;
    else if (key === 'webauthn.origins') value = raw.split(',').map((origin) => origin.trim());
    else if (raw === 'true' || raw === 'false') value = raw === 'true';
    else if (/^\d+(\.\d+)?$/.test(raw)) value = Number(raw);
    const path = key.split('.');
    // Plain names only: a key like __proto__ must not reach an object's prototype.
    if (path.some((part) => !/^[A-Za-z]+$/.test(part) || part === 'constructor')) throw DomainError.validation(key, 'is not a setting');
    let target = (change.settings ??= {});
    for (const part of path.slice(0, -1)) {
      const next = target[part];
      target = (target[part] = next !== null && typeof next === 'object' ? next : {}) as Record<string, unknown>;
    }
    target[path[path.length - 1]] = value;
  }
  return change;
}

const CLIENT_LISTS = {
  '--redirect-uri': 'redirectUris',
  '--post-logout-redirect-uri': 'postLogoutRedirectUris',
  '--grant': 'grantTypes',
  '--scope': 'scopes',
  '--resource': 'resources',
} as const;
const CLIENT_VALUES = {
  '--type': 'type',
  '--backchannel-logout-uri': 'backchannelLogoutUri',
  '--jwks-uri': 'jwksUri',
  '--token-endpoint-auth-method': 'tokenEndpointAuthMethod',
  '--id-token-alg': 'idTokenSignedResponseAlg',
} as const;
/** The lists whose items never contain a comma (URIs may). */
const COMMA_LISTS = new Set(['--grant', '--scope']);

export interface ClientOptions {
  type: string;
  redirectUris?: string[];
  postLogoutRedirectUris?: string[];
  grantTypes?: string[];
  scopes?: string[];
  resources?: string[];
  firstParty?: boolean;
  backchannelLogoutUri?: string;
  jwksUri?: string;
  tokenEndpointAuthMethod?: string;
  idTokenSignedResponseAlg?: string;
  accessTokenTtlSeconds?: number;
  json: boolean;
}

/**
 * The options of `clients create` as the admin API's fields; a string says what is wrong (a usage
 * error). The values are the domain's to judge, as for a REST request.
 */
export function parseClientOptions(flags: string[]): ClientOptions | string {
  const fields: Record<string, unknown> = {};
  let json = false;
  for (const flag of flags) {
    const at = flag.indexOf('=');
    const name = at < 0 ? flag : flag.slice(0, at);
    const value = at < 0 ? null : flag.slice(at + 1);
    if (name === '--first-party' || name === '--json') {
      if (value !== null) return `${name} takes no value`;
      if (name === '--json') json = true;
      else fields.firstParty = true;
      continue;
    }
    if (value === null || value === '') return `${name} needs a value (${name}=…)`;
    if (name in CLIENT_LISTS) {
      const key = CLIENT_LISTS[name as keyof typeof CLIENT_LISTS];
      const items = COMMA_LISTS.has(name) ? value.split(',').map((item) => item.trim()) : [value];
      fields[key] = [...((fields[key] as string[] | undefined) ?? []), ...items.filter((item) => item !== '')];
    } else if (name in CLIENT_VALUES) {
      const key = CLIENT_VALUES[name as keyof typeof CLIENT_VALUES];
      if (key in fields) return `${name} is given twice`;
      fields[key] = value;
    } else if (name === '--access-token-ttl') {
      if (!/^\d{1,9}$/.test(value)) return '--access-token-ttl takes a number of seconds';
      fields.accessTokenTtlSeconds = Number(value);
    } else return `Unknown option "${name}" for clients create`;
  }
  if (typeof fields.type !== 'string') return 'clients create needs --type=public or --type=confidential';
  return { ...(fields as Omit<ClientOptions, 'json'>), json };
}

/** One client of `clients list`: id, type, name, and what marks it. */
function clientLine(client: ReturnType<typeof presentClients.client>): string {
  const marks = [client.firstParty ? 'first party' : null, client.registeredBy === 'dynamic' ? 'registered dynamically' : null].filter(
    Boolean,
  );
  return `${client.clientId}  ${client.type}  ${client.name}${marks.length ? ` (${marks.join(', ')})` : ''}`;
}

/** Seconds until every token signed with the previous key has expired (0: rotating is safe). */
async function secondsUntilRotationIsSafe(app: INestApplicationContext): Promise<number> {
  const current = await app.get(TypeOrmSigningKeyStore).currentCreatedAt();
  if (!current) return 0;
  const config = app.get(AppConfig);
  const realms = await app.get(ListRealmsUseCase).execute();
  const longest = Math.max(config.accessTokenTtlSeconds, ...realms.map((realm) => realm.policy.accessTokenTtlSeconds));
  const elapsed = (app.get(Clock).now().getTime() - current.getTime()) / 1000;
  return Math.max(0, Math.ceil(longest - elapsed));
}

async function main(): Promise<void> {
  try {
    loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(1);
    }
    throw error;
  }
  // A failure to start (the embedded database held by a server, say) is said once, without a stack;
  // after that, errors only: the command's own output is what the operator reads (and a generated password).
  const app = await NestFactory.createApplicationContext(AppModule, { logger: false, abortOnError: false }).catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : String(error));
    process.exit(1);
  });
  app.useLogger(['error']);
  let code: number;
  try {
    // The one input of this entry point that is not service configuration.
    const adminPassword = process.env.ADMIN_PASSWORD || undefined;
    code = await runCli(process.argv.slice(2), app, {
      out: (line) => console.log(line),
      err: (line) => console.error(line),
      adminPassword,
    });
  } finally {
    await app.close();
  }
  process.exit(code);
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
}
