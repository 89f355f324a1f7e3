// Which scopes a program may ask for and be granted: ours (service.read, service.write) and no
// other. The provider lets scopes it does not know pass silently; we refuse them (invalid_scope).
import { scopes, type Scope } from '../../principal.ts';

/** offline_access is the provider's own (it may pass it on); refresh tokens are issued anyway. */
const IGNORED_SCOPES = new Set(['offline_access']);

const ours = (scope: string): scope is Scope => (scopes as readonly string[]).includes(scope);

/** Why the `scope` asked for is refused (invalid_scope's description), or undefined when it is ours. */
export function scopeRefusal(scopeParam: unknown): string | undefined {
  const requested = String(scopeParam ?? '')
    .split(' ')
    .filter((s) => s !== '' && !IGNORED_SCOPES.has(s));
  const unknown = requested.filter((s) => !ours(s));
  if (unknown.length === 0 && requested.length > 0) return undefined;
  const description = unknown.length > 0 ? `Unknown scope: ${unknown.join(' ')}.` : 'No scope was asked for.';
  return `${description} Ask for ${scopes.join(', ')} or both.`;
}

/** The scopes the consent page lists: ours that `scope` asks for, in our order. */
export function scopesAskedFor(scopeParam: unknown): Scope[] {
  const requested = String(scopeParam ?? '').split(' ');
  return scopes.filter((s) => requested.includes(s));
}

/** What a grant receives of the scopes the provider says are missing: ours only, space-separated. */
export function grantableScopes(missing: string[]): string {
  return missing.filter(ours).join(' ');
}
