/** What a developer token may do: the access model every context and the HTTP edge share. */
export const SCOPES = ['monitoring:read', 'analytics:read', 'incidents:read', 'incidents:write'] as const;
export type Scope = (typeof SCOPES)[number];
export type Role = 'editor' | 'viewer';
