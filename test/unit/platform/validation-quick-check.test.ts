/**
 * Bodies are checked against their DTO by class-validator; a valid body takes a shorter path
 * (`rulesOf` in src/platform/http/validation.ts: the DTO's rules read once into plain checks).
 * Every answer must stay class-validator's own: for every DTO of the service and bodies of right
 * and wrong values, `rulesOf` finds exactly the errors `validateSync` finds.
 */
import 'reflect-metadata';
import fc from 'fast-check';
import { plainToInstance } from 'class-transformer';
import { getMetadataStorage, type ValidationError, validateSync } from 'class-validator';
import '../../../src/app/http-app.js';
import { RULES, rulesOf, toInstance } from '../../../src/platform/http/validation.js';

type Dto = new () => object;

/** Every class with validation rules, once the service's modules are loaded. */
function dtoClasses(): Dto[] {
  const byTarget = (getMetadataStorage() as unknown as { validationMetadatas: Map<unknown, unknown[]> }).validationMetadatas;
  return [...byTarget.keys()].filter((target): target is Dto => typeof target === 'function');
}

function propertiesOf(dto: Dto): string[] {
  const rules = getMetadataStorage().getTargetValidationMetadatas(dto, undefined as unknown as string, false, false, undefined);
  return [...new Set(rules.map((rule) => rule.propertyName))];
}

/** Allowed values named by the rules (IsIn, enums), so that some bodies pass. */
function namedValues(dto: Dto): unknown[] {
  const rules = getMetadataStorage().getTargetValidationMetadatas(dto, undefined as unknown as string, false, false, undefined);
  return rules.flatMap((rule) => (rule.constraints ?? []).flatMap((constraint) => (Array.isArray(constraint) ? constraint : typeof constraint === 'object' && constraint !== null ? Object.values(constraint) : [])));
}

const SOME_VALUES: unknown[] = [
  null, true, false, 0, 1, 2, 7, -1, 1.5, 65_536, 2 ** 53, Number.MAX_SAFE_INTEGER,
  '', 'a', 'Checkout errors', 'x'.repeat(300), 'x'.repeat(5_000), ' ', '😀',
  '2026-11-26T10:00:00Z', '2026-02-30T00:00:00Z', '2026-11-26', 'https://example.com/health', 'http://127.0.0.1:8080/', 'ftp://x', 'not a url',
  'GET', 'POST', 'HEAD', 'warning', 'critical', 'up', 'down', '#ff0000', 'UTC', 'Europe/Berlin', 'a@example.com',
  [], [1], [1, 2, 3], [1, 1], [0], ['a'], [{}], [{ a: 1 }], [null],
  {}, { a: 1 }, { 'x-custom': 'v' }, { nested: { deep: [1] } },
  // Keys class-transformer leaves out of a plain object (methods of Object.prototype).
  { toString: 'x', valueOf: 1, hasOwnProperty: [1], kept: true }, [{ isPrototypeOf: {}, name: 'n' }],
];

const summary = (errors: ValidationError[]): unknown =>
  errors.map((error) => ({ property: error.property, constraints: error.constraints ?? null, children: summary(error.children ?? []) }));

describe('rulesOf: the errors class-validator finds, for every DTO of the service', () => {
  const dtos = dtoClasses();

  it('knows the service\'s DTOs', () => {
    expect(dtos.length).toBeGreaterThan(20);
  });

  it('finds exactly the errors validateSync finds, for bodies of right and wrong values', () => {
    let valid = 0;
    for (const dto of dtos) {
      const properties = propertiesOf(dto);
      const values = fc.constantFrom(...SOME_VALUES, ...namedValues(dto));
      // Each field absent two times in three, an unknown field one time in ten.
      const field = fc.oneof({ arbitrary: fc.constant(undefined), weight: 2 }, { arbitrary: values, weight: 1 });
      const fields = Object.fromEntries(properties.map((name) => [name, field]));
      const body = fc
        .record({ ...fields, unknown_field: fc.oneof({ arbitrary: fc.constant(undefined), weight: 9 }, { arbitrary: values, weight: 1 }) })
        .map((drawn) => Object.fromEntries(Object.entries(drawn).filter(([, value]) => value !== undefined)));
      fc.assert(
        fc.property(body, (plain) => {
          const instance = plainToInstance(dto, plain, { enableImplicitConversion: false }) as object;
          const expected = validateSync(instance, RULES);
          if (expected.length === 0) valid++;
          expect([dto.name, summary(rulesOf(instance))]).toEqual([dto.name, summary(expected)]);
        }),
        { numRuns: 300, seed: 31 },
      );
    }
    // Bodies that pass did occur, so the short path was taken as well as the long one.
    expect(valid).toBeGreaterThan(100);
  });

  it('builds each body into the very instance plainToInstance builds', () => {
    for (const dto of dtos) {
      const values = fc.constantFrom(...SOME_VALUES, ...namedValues(dto));
      const field = fc.oneof({ arbitrary: fc.constant(undefined), weight: 1 }, { arbitrary: values, weight: 2 });
      const body = fc
        .record(Object.fromEntries(propertiesOf(dto).map((name) => [name, field])))
        .map((drawn) => Object.fromEntries(Object.entries(drawn).filter(([, value]) => value !== undefined)));
      fc.assert(
        fc.property(body, (plain) => {
          const expected = plainToInstance(dto, structuredClone(plain), { enableImplicitConversion: false }) as object;
          const built = toInstance(dto, structuredClone(plain));
          expect(Object.getPrototypeOf(built)).toBe(Object.getPrototypeOf(expected));
          // Same keys in the same order, same values, nested instances of the same classes.
          expect([dto.name, JSON.stringify(built)]).toEqual([dto.name, JSON.stringify(expected)]);
          expect(built).toStrictEqual(expected);
        }),
        { numRuns: 200, seed: 31 },
      );
    }
  });
});
