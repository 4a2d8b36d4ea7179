import type { Problem, ProblemError } from './problem.js';

/**
 * How a context's domain errors read at the HTTP edge. Domain code throws its own errors
 * (no HTTP types there); each context's edge contributes one mapping
 * (`<context>/http/<context>-errors.ts`), and the edge (`toProblem`) asks them for every route.
 */
export type DomainErrorMapping = (error: unknown) => ProblemError | null;

/**
 * Every context's mapping, in one list handed over by the composition root
 * (`domainErrorMappings` in src/app/contexts.ts), not gathered by import side effects.
 */
export class DomainErrors {
  constructor(private readonly mappings: readonly DomainErrorMapping[]) {}

  problem(error: unknown): Problem | null {
    for (const mapping of this.mappings) {
      const mapped = mapping(error);
      if (mapped) return mapped.problem;
    }
    return null;
  }
}
