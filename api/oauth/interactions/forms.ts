// What each form of the flow posts (urlencoded, parsed by routes.ts), as zod schemas.
import { z } from 'zod';
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from '../../../shared/platform/passwords.ts';

export const Credentials = z.object({
  email: z.string().trim().max(254).pipe(z.email()),
  password: z.string().min(1).max(MAX_PASSWORD_LENGTH),
  csrf: z.string(),
});

const InvitationCode = z
  .string()
  .trim()
  .max(100)
  .transform((code) => code || undefined);

export const NewCredentials = Credentials.extend({
  password: z.string().min(MIN_PASSWORD_LENGTH).max(MAX_PASSWORD_LENGTH),
  invitationCode: InvitationCode.optional(),
});

export const Consent = z.object({ csrf: z.string(), decision: z.enum(['allow', 'deny']), account: z.string().max(100).optional() });

export const Invitation = z.object({ csrf: z.string(), invitationCode: InvitationCode });

/** The email as typed, to show again on the page that answers a refused form. */
export const typedEmail = (body: unknown): string | undefined => {
  const email = (body as { email?: unknown } | undefined)?.email;
  return typeof email === 'string' ? email.trim() : undefined;
};
