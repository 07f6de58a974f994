// The account console: one page at /account/ (views chosen by the URL's fragment), /verify-email and
// /reset-password. It follows the client's state: signed out, a second factor awaited, signed in.
import { type AuthSnapshot, createIdentityClient, type IdentityProvider } from '../../client/src/index';
import { profileView, securityView, sessionsView } from './account-views';
import { appsView } from './apps-views';
import type { App, View } from './app';
import { emailCodeView, forgotPasswordView, secondFactorView, signInView, signUpView } from './auth-views';
import { describeError } from './messages';
import { h, liveRegion, say } from './dom';
import { resetPasswordPage, verifyEmailPage } from './link-pages';
import { invitationPage, organizationsView } from './organization-views';

const params = new URLSearchParams(location.search);
const askedRealm = params.get('realm');
const realm = askedRealm && /^[a-z0-9][a-z0-9-]{0,62}$/.test(askedRealm) ? askedRealm : 'default';
// The realm's display name, written into the page by the service (the realm id when unknown).
const realmName = document.querySelector<HTMLMetaElement>('meta[name="realm-name"]')?.content || realm;
const page = location.pathname.replace(/\/+$/, '');
const onAccount = page === '/account';
// The invitation link's page (under /account/): it needs the session, to accept for its user.
const onInvitation = page === '/account/invitation';

const client = createIdentityClient({
  baseUrl: location.origin,
  realm,
  transport: 'cookie',
  // Sessions bound to a key that never leaves this browser (DPoP): a stolen token alone is useless.
  dpop: true,
  // The email link pages need no session.
  restore: onAccount || onInvitation,
});

const query = realm === 'default' ? '' : `?realm=${realm}`;
const status = liveRegion('status');
// What went wrong before the view opened (a refused return from an identity provider).
const problem = liveRegion('error');
let providers: Promise<IdentityProvider[]> | undefined;
const app: App = {
  client,
  realm,
  href: (view) => `/account/${query}${view}`,
  notify: (message) => say(status, message),
  returnTo: `${location.origin}/account/${query}`,
  providers: () => (providers ??= client.federation.providers().catch(() => [])),
};

const main = h('main', { id: 'main' });
const who = h('span', { class: 'who' });
const header = h(
  'header',
  { class: 'top' },
  h('a', { class: 'brand', href: app.href('') }, 'Account', h('span', { class: 'realm' }, ` · ${realmName}`)),
);
const nav = h('nav', { 'aria-label': 'Account' });
document.body.replaceChildren(header, nav, main);

let shown = '';
let leaving: (() => void) | undefined;
/** News for the next view that opens (the result of a return from an identity provider). */
let carried: { notice?: string; problem?: string } | null = null;

/** Puts a view on screen; after the first one, its heading takes the focus. */
function show(key: string, view: View, notice: string | null = null): void {
  const first = shown === '';
  shown = key;
  leaving?.();
  leaving = view.leave;
  document.title = `${view.title} — ${realmName} account`;
  main.replaceChildren(status, problem, view.content);
  say(status, carried?.notice ?? notice);
  say(problem, carried?.problem ?? null);
  carried = null;
  if (!first) view.content.querySelector<HTMLElement>('.title')?.focus();
}

const SIGNED_OUT_NOTICE: Record<string, string> = {
  'signed-out': 'You have signed out.',
  'other-tab': 'You signed out in another tab.',
  'session-ended': 'Your session has ended. Please sign in again.',
  'reauthentication-required': 'For your security, please sign in again.',
};

const VIEWS: Record<string, [string, (app: App) => View]> = {
  profile: ['Profile', profileView],
  sessions: ['Sessions', sessionsView],
  security: ['Security', securityView],
  organizations: ['Organizations', organizationsView],
  apps: ['Apps', appsView],
};

/** Who is signed in, and in which organization they work (the active organization). */
const whoText = (snapshot: Extract<AuthSnapshot, { status: 'signed-in' }>) =>
  `${snapshot.user?.email ?? ''}${snapshot.organization ? ` · ${snapshot.organization.slug}` : ''}`;

function signedInChrome(view: string, snapshot: Extract<AuthSnapshot, { status: 'signed-in' }>): void {
  header.classList.remove('solo');
  who.textContent = whoText(snapshot);
  if (!header.contains(who)) {
    const signOut = h(
      'button',
      {
        type: 'button',
        class: 'secondary',
        onclick: () => {
          // The next sign-in starts from the profile.
          history.replaceState(null, '', app.href(''));
          void client.signOut();
        },
      },
      'Sign out',
    );
    header.append(h('div', { class: 'account' }, who, signOut));
  }
  nav.replaceChildren(
    h(
      'ul',
      {},
      Object.entries(VIEWS).map(([key, [label]]) =>
        h('li', {}, h('a', { href: app.href(`#${key}`), 'aria-current': key === view ? 'page' : null }, label)),
      ),
    ),
  );
  nav.hidden = false;
}

function signedOutChrome(): void {
  // Alone above a centred card, the brand is centred on the card's axis.
  header.classList.add('solo');
  header.querySelector('.account')?.remove();
  nav.replaceChildren();
  nav.hidden = true;
}

/** Shows what the state and the URL ask for, unless it is on screen already. */
function route(): void {
  const snapshot = client.getSnapshot();
  const fragment = location.hash.slice(1);
  if (snapshot.status === 'loading') {
    // The service could not be asked about the session yet (rate limited, unreachable): it may be
    // alive, so neither the sign-in form nor the account shows until the client knows.
    if (snapshot.retryAt && shown === '') main.replaceChildren(h('p', { role: 'status' }, 'Still connecting to your account…'));
    return;
  }
  if (snapshot.status === 'signed-in') {
    if (onInvitation) {
      signedInChrome('', snapshot);
      if (shown !== 'in:invitation') show('in:invitation', invitationPage(app, params.get('token')));
      return;
    }
    const view = fragment in VIEWS ? fragment : 'profile';
    const key = `in:${view}`;
    signedInChrome(view, snapshot);
    if (shown !== key) show(key, VIEWS[view][1](app));
    if (!snapshot.user) void client.me().catch(() => undefined);
    return;
  }
  signedOutChrome();
  if (snapshot.status === 'mfa-required') {
    const key = `mfa:${snapshot.reason}`;
    if (shown !== key) show(key, secondFactorView(app, snapshot.reason, snapshot.methods));
    return;
  }
  const name = fragment === 'sign-up' || fragment === 'forgot-password' || fragment === 'email-code' ? fragment : 'sign-in';
  const view =
    name === 'sign-up' ? signUpView : name === 'forgot-password' ? forgotPasswordView : name === 'email-code' ? emailCodeView : signInView;
  const key = `out:${name}`;
  if (shown !== key) {
    const notice = shown.startsWith('in:') || shown.startsWith('mfa:') ? (SIGNED_OUT_NOTICE[snapshot.reason ?? ''] ?? null) : null;
    show(key, view(app), onInvitation ? 'Sign in with the address the invitation was sent to, to accept it.' : notice);
  }
}

if (page === '/verify-email' || page === '/reset-password') {
  signedOutChrome();
  const token = params.get('token');
  show('link', page === '/verify-email' ? verifyEmailPage(app, token) : resetPasswordPage(app, token));
} else if (params.has('email_token')) {
  // The page an emailed sign-in link opens: it signs in in the browser that asked, nowhere else.
  signedOutChrome();
  main.append(h('p', {}, 'Signing you in…'));
  client.emailCode
    .completeLink()
    .then(
      () => undefined,
      (error: { code?: string }) => {
        history.replaceState(null, '', app.href('#email-code'));
        show(
          'out:email-code',
          emailCodeView(
            app,
            error?.code === 'EMAIL_LINK_OTHER_BROWSER'
              ? 'This link works only in the browser where you asked for it. Enter the code from the email instead.'
              : `${describeError(error)} Enter the code from the email instead, or ask for a new one.`,
          ),
        );
      },
    )
    .finally(() => {
      client.subscribe(route);
      addEventListener('hashchange', route);
      route();
    });
} else if (params.has('code') || params.has('link_code') || params.has('error')) {
  // The return from an identity provider: a sign-in, a linked account, or why neither.
  signedOutChrome();
  main.append(h('p', {}, 'One moment…'));
  client.federation
    .complete()
    .then(
      async (result) => {
        if (result?.kind !== 'linked') return;
        const name = (await app.providers()).find((p) => p.alias === result.provider)?.displayName ?? result.provider;
        carried = { notice: `Your ${name} account is linked: it signs you in to this one.` };
        history.replaceState(null, '', app.href('#security'));
      },
      async (error) => {
        carried = { problem: describeError(error) };
        // A link refused: back where it was asked for.
        await client.ready;
        if (client.getSnapshot().status === 'signed-in') history.replaceState(null, '', app.href('#security'));
      },
    )
    .finally(() => {
      client.subscribe(route);
      addEventListener('hashchange', route);
      void client.ready.then(route);
    });
} else {
  main.append(h('p', {}, 'Loading…'));
  client.subscribe(route);
  // Only the header's name changes with the user: the view stays.
  client.subscribe(() => {
    const snapshot = client.getSnapshot();
    if (snapshot.status === 'signed-in') who.textContent = whoText(snapshot);
  });
  addEventListener('hashchange', route);
  void client.ready.then(route);
}
