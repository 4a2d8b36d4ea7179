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
