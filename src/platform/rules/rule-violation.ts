/**
 * One broken rule of a request, as a `400 validation_failed` lists it: `field` names where it
 * applies. Pure, so every context's domain refuses with the same shape and the HTTP edge maps it
 * once.
 */
export interface RuleViolation {
  field: string;
  code: string;
  message: string;
}

/** The violations on one line ("field: message; field: message"): the message of a context's rules error. */
export function violationsMessage(violations: readonly RuleViolation[]): string {
  return violations.map((v) => `${v.field}: ${v.message}`).join('; ');
}
