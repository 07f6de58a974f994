// Apps: the apps the user let sign them in through the realm's OpenID provider, what each may
// access, and the revocation of one (its grant and every token it holds for the user end).
import type { GrantedApp } from '../../client/src/index';
import type { App, View } from './app';
import { action, type Child, h, hidden, liveRegion, loading, row, time, title } from './dom';

/** The consent page's words for the standard scopes; any other scope (an API's) is shown as it is. */
const SCOPE_TEXT: Record<string, string> = {
  openid: 'Know who you are',
  profile: 'See your name and picture',
  email: 'See your email address',
  roles: 'See your roles',
  offline_access: 'Stay signed in when you are away',
};

export function appsView(app: App): View {
  const body = h('div');
  const content = h(
    'section',
    {},
    title('Apps with access to your account'),
    h('p', { class: 'muted' }, 'These apps signed you in with this account. Revoke the access of any app you no longer use.'),
    body,
  );
  const reload = () => void loading(body, render);
  const render = async (): Promise<Child[]> => {
    const apps = (await app.client.apps.list()).sort((a, b) => b.grantedAt.localeCompare(a.grantedAt));
    if (apps.length === 0) return [h('p', {}, 'No app has access to your account.')];
    const card = (granted: GrantedApp) => {
      const alert = liveRegion('error');
      const revoke = action(
        'Yes, revoke access',
        async () => {
          await app.client.apps.revoke(granted.clientId);
          app.notify(`${granted.name} no longer has access to your account.`);
          reload();
        },
        alert,
        { class: 'danger' },
      );
      // Screen readers hear which app the button cuts off.
      revoke.append(hidden(` of ${granted.name}`));
      return h(
        'li',
        { class: 'session' },
        h('h2', {}, granted.name),
        h('p', { class: 'muted' }, 'It may:'),
        h(
          'ul',
          { 'aria-label': `What ${granted.name} may access` },
          granted.scopes.map((scope) => h('li', {}, SCOPE_TEXT[scope] ?? scope)),
        ),
        h('dl', { class: 'facts compact' }, row('Allowed', time(granted.grantedAt)), row('Last used', time(granted.lastUsedAt, true))),
        h(
          'details',
          {},
          h('summary', {}, 'Revoke access', hidden(` of ${granted.name}`)),
          h('p', {}, `${granted.name} will be signed out, and must ask you again before it can use your account.`),
          alert,
          h('div', { class: 'actions' }, revoke),
        ),
      );
    };
    return [h('ul', { class: 'sessions', 'aria-label': 'Apps' }, apps.map(card))];
  };
  reload();
  return { title: 'Apps', content };
}
