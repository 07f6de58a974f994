/** The realm of the super-admins: never open to registration, never disabled. */
export const MASTER_REALM = 'master';
