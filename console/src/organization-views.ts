// Organizations: the user's memberships and the active one (the switcher), the members and
// invitations of an organization the user administers (org-admin), and the invitation link's page.
import type { Membership, OrganizationInvitation, OrganizationMember } from '../../client/src/index';
import type { App, View } from './app';
import { action, type Child, field, form, h, hidden, liveRegion, loading, say, time, title } from './dom';

const ORG_ADMIN = 'org-admin';
const rolesText = (roles: readonly string[]) => (roles.length > 0 ? roles.join(', ') : 'no roles');
const parseRoles = (text: string) =>
  text
    .split(',')
    .map((role) => role.trim())
    .filter((role) => role.length > 0);

/** The user's organizations; one of them can be the session's active one (the organization switcher). */
export function organizationsView(app: App): View {
  const body = h('div');
  const content = h(
    'section',
    {},
    title('Your organizations'),
    h('p', { class: 'muted' }, 'The apps you use see the organization you work in, with your roles there.'),
    body,
  );
  const reload = () => void loading(body, render);
  const render = async (): Promise<Child[]> => {
    const organizations = await app.client.organizations.list();
    const snapshot = app.client.getSnapshot();
    const active = snapshot.status === 'signed-in' ? snapshot.organization?.id : undefined;
    const alert = liveRegion('error');
    if (organizations.length === 0) return [alert, h('p', {}, 'You are not a member of any organization.')];
    const card = (organization: Membership) => {
      const isActive = organization.id === active;
      const switcher = action(
        isActive ? 'Stop working in it' : 'Work in this organization',
        async () => {
          await app.client.organizations.setActive(isActive ? null : organization.id);
          app.notify(isActive ? `You no longer work in ${organization.name}.` : `You now work in ${organization.name}.`);
          reload();
        },
        alert,
        { class: isActive ? 'secondary' : 'primary' },
      );
      switcher.append(hidden(` ${organization.name}`));
      const manage =
        organization.roles.includes(ORG_ADMIN) &&
        h(
          'button',
          { type: 'button', class: 'secondary', onclick: () => body.replaceChildren(membersPanel(app, organization, reload)) },
          'Manage members',
          hidden(` of ${organization.name}`),
        );
      return h(
        'li',
        { class: 'session' },
        h('h2', {}, organization.name, isActive && h('span', { class: 'badge ok' }, 'Active')),
        h('p', { class: 'muted' }, `Your roles: ${rolesText(organization.roles)}`),
        h('div', { class: 'actions' }, switcher, manage),
      );
    };
    return [alert, h('ul', { class: 'sessions', 'aria-label': 'Organizations' }, organizations.map(card))];
  };
  reload();
  return { title: 'Organizations', content };
}

/** The members and pending invitations of an organization the user administers. */
function membersPanel(app: App, organization: Membership, back: () => void): HTMLElement {
  const heading = title(`Members of ${organization.name}`, 'h2');
  const body = h('div');
  const panel = h(
    'div',
    {},
    heading,
    h('p', {}, h('button', { type: 'button', class: 'secondary', onclick: back }, 'Back to your organizations')),
    body,
  );
  const reload = () => void loading(body, render);
  const render = async (): Promise<Child[]> => {
    const [{ members, pagination }, invitations] = await Promise.all([
      app.client.organizations.members(organization.id, { page: 1, limit: 100 }),
      app.client.organizations.invitations(organization.id),
    ]);
    const alert = liveRegion('error');
    const member = (m: OrganizationMember) => {
      const roles = field(
        'Roles',
        'roles',
        { value: m.roles.join(', '), autocomplete: 'off' },
        'Comma-separated, e.g. org-admin, billing.',
      );
      const remove = action(
        'Remove',
        async () => {
          await app.client.organizations.removeMember(organization.id, m.userId);
          app.notify(`${m.email} was removed.`);
          reload();
        },
        alert,
        { class: 'secondary' },
      );
      remove.append(hidden(` ${m.email}`));
      return h(
        'li',
        { class: 'session' },
        h('h3', {}, m.email),
        h('p', { class: 'muted' }, 'Joined ', time(m.joinedAt)),
        form({
          label: `Roles of ${m.email}`,
          fields: [roles],
          submit: 'Save roles',
          submitClass: 'secondary',
          onSubmit: async (values) => {
            await app.client.organizations.setMemberRoles(organization.id, m.userId, parseRoles(values.roles));
            app.notify(`The roles of ${m.email} were saved.`);
          },
          after: [remove],
        }),
      );
    };
    const invitation = (i: OrganizationInvitation) => {
      const revoke = action(
        'Revoke',
        async () => {
          await app.client.organizations.revokeInvitation(organization.id, i.id);
          app.notify(`The invitation to ${i.email} was revoked.`);
          reload();
        },
        alert,
        { class: 'secondary' },
      );
      revoke.append(hidden(` the invitation to ${i.email}`));
      return h('li', {}, `${i.email} (${rolesText(i.roles)}), until `, time(i.expiresAt), ' ', revoke);
    };
    const email = field('Email address', 'email', { type: 'email', autocomplete: 'off', required: true, maxlength: 254 });
    const roles = field('Roles', 'roles', { autocomplete: 'off' }, 'Comma-separated; leave empty for none.');
    return [
      alert,
      h('p', {}, `${pagination.total} ${pagination.total === 1 ? 'member' : 'members'}`),
      h('ul', { class: 'sessions', 'aria-label': 'Members' }, members.map(member)),
      h('h3', {}, 'Invite someone'),
      form({
        label: 'Invite someone',
        fields: [email, roles],
        submit: 'Send invitation',
        onSubmit: async (values) => {
          await app.client.organizations.invite(organization.id, { email: values.email, roles: parseRoles(values.roles) });
          app.notify(`An invitation was sent to ${values.email}.`);
          reload();
        },
      }),
      h('h3', {}, 'Pending invitations'),
      invitations.length > 0
        ? h('ul', { 'aria-label': 'Pending invitations' }, invitations.map(invitation))
        : h('p', { class: 'muted' }, 'None.'),
    ];
  };
  reload();
  queueMicrotask(() => heading.focus());
  return panel;
}

/**
 * The invitation link's page, for a signed-in user. Opening it changes nothing (a mail scanner
 * opens links too): it asks, and only the answer accepts.
 */
export function invitationPage(app: App, token: string | null): View {
  const heading = title('Join an organization?');
  const alert = liveRegion('error');
  const content = h('section', { class: 'card' }, heading, alert);
  const toAccount = h('p', { class: 'aside' }, h('a', { href: app.href('#organizations') }, 'Go to your organizations'));
  if (!token) {
    say(alert, 'This link is incomplete: open the link from the email once more.');
    content.append(toAccount);
    return { title: 'Invitation', content };
  }
  const snapshot = app.client.getSnapshot();
  const email = snapshot.status === 'signed-in' ? (snapshot.user?.email ?? null) : null;
  const accept = action(
    'Accept the invitation',
    async () => {
      const joined = await app.client.organizations.accept(token);
      heading.textContent = `You joined ${joined.name}`;
      const work = action(
        `Work in ${joined.name}`,
        async () => {
          await app.client.organizations.setActive(joined.id);
          app.notify(`You now work in ${joined.name}.`);
        },
        alert,
        { class: 'primary' },
      );
      content.replaceChildren(heading, alert, h('p', {}, `Your roles there: ${rolesText(joined.roles)}.`), work, toAccount);
      heading.focus();
      app.notify(`You joined ${joined.name}.`);
    },
    alert,
    { class: 'primary' },
  );
  content.append(
    h(
      'p',
      {},
      'You were invited to join an organization',
      email ? ` as ${email}` : '',
      '. Accept only if you expected it; the invitation is for the address it was sent to, once verified.',
    ),
    h('div', { class: 'actions' }, accept, h('a', { href: app.href('#organizations') }, 'Not now')),
  );
  return { title: 'Invitation', content };
}
