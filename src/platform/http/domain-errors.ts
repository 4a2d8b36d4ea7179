import type { Problem, ProblemError } from './problem.js';

/**
 * How a context's domain errors read at the HTTP edge. Domain code throws its own errors
 * (no HTTP types there); each context contributes one mapping, and the edge (`toProblem`) asks
 * them once, for every route.
 */
export type DomainErrorMapping = (error: unknown) => ProblemError | null;

const mappings: DomainErrorMapping[] = [];

export function registerDomainErrors(mapping: DomainErrorMapping): void {
  if (!mappings.includes(mapping)) mappings.push(mapping);
}

export function domainProblem(error: unknown): Problem | null {
  for (const mapping of mappings) {
    const mapped = mapping(error);
    if (mapped) return mapped.problem;
  }
  return null;
}
