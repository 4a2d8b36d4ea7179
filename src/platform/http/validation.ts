import { plainToInstance, TransformationType } from 'class-transformer';
import { defaultMetadataStorage } from 'class-transformer/cjs/storage.js';
import { getMetadataStorage, type ValidationArguments, type ValidationError, validateSync } from 'class-validator';
import { closestName } from './did-you-mean.js';
import { MAX_LISTED_ERRORS, Problems, type FieldError } from './problem.js';
import { nextTurn } from '../next-turn.js';

/** class-validator constraint names -> the stable codes of api-decisions.md. */
const CODES: Record<string, string> = {
  isDefined: 'required',
  isNotEmpty: 'required',
  whitelistValidation: 'unknown_field',
  maxLength: 'too_long',
  minLength: 'too_short',
  arrayMaxSize: 'too_many',
  arrayMinSize: 'too_short',
  arrayNotEmpty: 'too_short',
  arrayUnique: 'not_unique',
  min: 'out_of_range',
  max: 'out_of_range',
  isPositive: 'out_of_range',
  isIn: 'invalid_value',
  isEnum: 'invalid_value',
  isRfc3339: 'invalid_value',
  isUrl: 'invalid_value',
  isInt: 'invalid_type',
  isNumber: 'invalid_type',
  isString: 'invalid_type',
  isBoolean: 'invalid_type',
  isArray: 'invalid_type',
  isObject: 'invalid_type',
  isHeaderMap: 'invalid_value',
  isJsonObjectWithin: 'invalid_value',
  matches: 'invalid_value',
};

/** A missing required field is one `required` error, not one per rule its absent value fails. */
function missingField(error: ValidationError, field: string): FieldError[] | null {
  if (error.value !== undefined || !error.constraints || error.constraints.whitelistValidation) return null;
  return [{ field, code: 'required', message: 'is required' }];
}

function flatten(errors: ValidationError[], prefix = ''): FieldError[] {
  return errors.flatMap((error) => {
    // One path style for every validator: `checks[3].checked_at`, as the incident rules write it.
    const field = !prefix ? error.property : /^\d+$/.test(error.property) ? `${prefix}[${error.property}]` : `${prefix}.${error.property}`;
    const missing = missingField(error, field);
    if (missing) return missing;
    const own = Object.entries(error.constraints ?? {}).map(([constraint, message]) => ({
      field,
      code: CODES[constraint] ?? 'invalid_value',
      message: constraint === 'whitelistValidation' ? 'is not a known field' : message.replace(new RegExp(`^${error.property} `), ''),
    }));
    // A value of the wrong type: that is the error; ranges, lengths and formats cannot apply to it.
    const wrongType = own.filter((e) => e.code === 'invalid_type');
    if (wrongType.length > 0) return wrongType;
    return [...own, ...flatten(error.children ?? [], field)];
  });
}

/** The options every body is validated with: unknown fields refused, nothing skipped. */
export const RULES = { whitelist: true, forbidNonWhitelisted: true, forbidUnknownValues: false };

/**
 * class-validator's rules of an instance: its errors (none for a valid instance). A valid body
 * is the common case, and class-validator builds an error object per property and filters the
 * whole metadata store per call to find it so (a few percent of a command's CPU): a DTO's rules
 * are read once into plain checks (`quickCheckOf`), which call the same constraint functions
 * with the same arguments. When they pass, so would class-validator; anything else, or any
 * doubt, runs class-validator itself, so every error answer is still its own.
 */
export function rulesOf(instance: object): ValidationError[] {
  const quick = quickCheckOf(instance.constructor);
  if (quick?.(instance as Record<string, unknown>)) return [];
  return validateSync(instance, RULES);
}

/** Whether class-validator would find no error in an instance of one DTO class (false: ask it). */
type QuickCheck = (instance: Record<string, unknown>) => boolean;

interface RuleMetadata {
  type: string;
  propertyName: string;
  constraints: unknown[];
  constraintCls?: object;
  each?: boolean;
  validateIf?: (object: object, value: unknown) => boolean;
}

interface ConstraintMetadata {
  async: boolean;
  instance: { validate(value: unknown, args: ValidationArguments): unknown };
}

const quickChecks = new WeakMap<object, QuickCheck | null>();

function quickCheckOf(dto: unknown): QuickCheck | null {
  if (typeof dto !== 'function') return null;
  let check = quickChecks.get(dto);
  if (check === undefined) quickChecks.set(dto, (check = compileQuickCheck(dto)));
  return check;
}

/**
 * The checks `validateSync(instance, RULES)` runs for `dto` (ValidationExecutor.execute and
 * performValidations), in the same order: per property, its conditions (`ValidateIf`: all must
 * hold, else the property is not checked), then each rule's constraint (`isDefined` and custom
 * alike; a rule's own `validateIf`; `each` over an array, set or map; async constraints skipped as
 * validateSync skips them). A property of nested DTOs passes only when absent (undefined, which
 * class-validator does not descend into); any other value, or a rule type it does not know,
 * leaves the answer to class-validator. Every own key of the instance must have rules
 * (`whitelist`, `forbidNonWhitelisted`).
 */
function compileQuickCheck(dto: object): QuickCheck | null {
  const storage = getMetadataStorage();
  const rules = storage.getTargetValidationMetadatas(dto as new () => object, undefined as unknown as string, false, false, undefined) as unknown as RuleMetadata[];
  const properties = new Map<string, { conditions: RuleMetadata[]; checks: Array<{ rule: RuleMetadata; constraints: ConstraintMetadata[] }>; nested: boolean }>();
  for (const rule of rules) {
    let property = properties.get(rule.propertyName);
    if (!property) properties.set(rule.propertyName, (property = { conditions: [], checks: [], nested: false }));
    switch (rule.type) {
      case 'conditionalValidation':
        property.conditions.push(rule);
        break;
      case 'isDefined':
      case 'customValidation':
        property.checks.push({ rule, constraints: storage.getTargetValidatorConstraints(rule.constraintCls as new () => object) as unknown as ConstraintMetadata[] });
        break;
      case 'nestedValidation':
        property.nested = true;
        break;
      case 'whitelistValidation':
        break;
      default:
        return null;
    }
  }
  const targetName = (dto as { name?: string }).name;
  const list = [...properties].map(([name, property]) => ({ name, ...property }));
  return (instance) => {
    for (const key of Object.keys(instance)) if (!properties.has(key)) return false;
    for (const property of list) {
      const value = instance[property.name];
      let checked = true;
      for (const condition of property.conditions) if (!(condition.constraints[0] as (object: object, value: unknown) => boolean)(instance, value)) checked = false;
      if (!checked) continue;
      for (const { rule, constraints } of property.checks) {
        if (rule.validateIf && !rule.validateIf(instance, value)) continue;
        for (const constraint of constraints) {
          if (constraint.async) continue;
          const args: ValidationArguments = { targetName: targetName as string, property: rule.propertyName, object: instance, value, constraints: rule.constraints as unknown[] };
          if (rule.each && (Array.isArray(value) || value instanceof Set || value instanceof Map)) {
            for (const item of Array.isArray(value) ? value : value instanceof Set ? [...value] : [...value.values()]) if (!passed(constraint.instance.validate(item, args))) return false;
          } else if (!passed(constraint.instance.validate(value, args))) return false;
        }
      }
      if (property.nested && value !== undefined) return false;
    }
    return true;
  };
}

/** A constraint's answer that is certainly a pass (a promise is not: class-validator decides). */
function passed(result: unknown): boolean {
  return Boolean(result) && !(result instanceof Promise);
}

/** What a DTO accepts at its top level, read once from its class-validator metadata. */
interface DtoShape {
  fields: Set<string>;
  /** Array fields: their documented maximum, and whether each item is a nested DTO (an object). */
  arrays: Map<string, { min: number | null; max: number | null; objects: boolean }>;
}

const shapes = new WeakMap<object, DtoShape>();

function shapeOf(dto: new () => object): DtoShape {
  let shape = shapes.get(dto);
  if (shape) return shape;
  shape = { fields: new Set(), arrays: new Map() };
  for (const rule of getMetadataStorage().getTargetValidationMetadatas(dto, '', true, false)) {
    shape.fields.add(rule.propertyName);
    const name = (rule as { name?: string }).name;
    const array = shape.arrays.get(rule.propertyName) ?? { min: null, max: null, objects: false };
    if (name === 'arrayMaxSize') shape.arrays.set(rule.propertyName, { ...array, max: Number(rule.constraints[0]) });
    else if (name === 'arrayMinSize') shape.arrays.set(rule.propertyName, { ...array, min: Number(rule.constraints[0]) });
    else if (rule.type === 'nestedValidation' && rule.each) shape.arrays.set(rule.propertyName, { ...array, objects: true });
  }
  shapes.set(dto, shape);
  return shape;
}

const isObject = (value: unknown) => value !== null && typeof value === 'object' && !Array.isArray(value);

/**
 * The path of the first object inside `value` with its own `constructor` key, or null.
 * class-transformer takes an object's `constructor` as the class to build it with, so such a key
 * anywhere in a DTO body made it throw (a 500); the field is refused instead. Iterative, and
 * bodies are at most 64 levels deep anyway (json-body.ts).
 */
function constructorKeyPath(value: unknown, path: string): string | null {
  const stack: Array<[unknown, string]> = [[value, path]];
  while (stack.length > 0) {
    const [current, at] = stack.pop()!;
    if (current === null || typeof current !== 'object') continue;
    if (Array.isArray(current)) {
      for (let i = current.length - 1; i >= 0; i--) stack.push([current[i], `${at}[${i}]`]);
      continue;
    }
    if (Object.hasOwn(current, 'constructor')) return `${at}.constructor`;
    for (const [key, child] of Object.entries(current)) stack.push([child, `${at}.${key}`]);
  }
  return null;
}

/**
 * Shape and counts first, in time linear in the body and with a bounded list: unknown top-level
 * fields, arrays past their documented maximum, nested items that are not objects. The fields
 * found wrong here are left out of the rule-by-rule validation that follows, so a huge array or
 * a million unknown keys never reaches it.
 */
function checkShape(shape: DtoShape, body: Record<string, unknown>): { errors: FieldError[]; omitted: number; rest: Record<string, unknown>; refused: Set<string> } {
  const errors: FieldError[] = [];
  const refused = new Set<string>();
  let omitted = 0;
  const report = (error: FieldError) => (errors.length < MAX_LISTED_ERRORS ? errors.push(error) : omitted++);
  const rest: Record<string, unknown> = {};
  for (const key of Object.keys(body)) {
    if (!shape.fields.has(key)) {
      const near = closestName(key, shape.fields);
      report({ field: key, code: 'unknown_field', message: near ? `is not a known field; did you mean \`${near}\`?` : 'is not a known field' });
      continue;
    }
    const value = body[key];
    const array = shape.arrays.get(key);
    if (array && Array.isArray(value)) {
      if (array.max !== null && value.length > array.max) {
        report({ field: key, code: 'too_many', message: `must contain no more than ${array.max} elements` });
        refused.add(key);
        continue;
      }
      if (array.objects && !value.every(isObject)) {
        value.forEach((item, index) => {
          if (!isObject(item)) report({ field: `${key}[${index}]`, code: 'invalid_type', message: 'must be a JSON object' });
        });
        refused.add(key);
        continue;
      }
    }
    const constructorKey = constructorKeyPath(value, key);
    if (constructorKey) {
      report({ field: constructorKey, code: 'invalid_value', message: 'is not allowed: "constructor" is not accepted as a key' });
      refused.add(key);
      continue;
    }
    rest[key] = value;
  }
  return { errors, omitted, rest, refused };
}

/**
 * Validates a JSON body against a DTO class, listing every violated rule (at most
 * MAX_LISTED_ERRORS of them, with a count of the rest). Unknown fields are errors; values are
 * not coerced (a string is never accepted for an integer).
 */
export function validateBody<T extends object>(dto: new () => T, body: unknown, extra: FieldError[] = []): T {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw Problems.validation([{ field: '', code: 'invalid_type', message: 'the body must be a JSON object' }, ...extra]);
  }
  const { value, errors, omitted } = checkBody(dto, body);
  if (errors.length + extra.length > 0) throw Problems.validation([...errors, ...extra], undefined, omitted);
  return value;
}

/**
 * A DTO with rules across its fields or over array elements, which property decorators cannot
 * say (at least one of several fields, two fields that exclude each other, `ids[3]` repeated).
 * Runs on every body, together with the property rules, so one 400 lists everything.
 */
export interface BodyRules {
  bodyRules(): FieldError[];
}

function hasBodyRules(instance: object): instance is BodyRules {
  return typeof (instance as Partial<BodyRules>).bodyRules === 'function';
}

/**
 * A body checked against its DTO: the fields that passed (`value`; a field with an error of its
 * own is left out, an array keeps its elements) and every violated rule (`errors`, at most
 * MAX_LISTED_ERRORS from the shape check, `omitted` the rest). For commands whose remaining rules
 * need lookups or come after their own 404/409 checks, so that one 400 lists all of them.
 */
export interface CheckedBody<T> {
  value: T;
  errors: FieldError[];
  omitted: number;
}

/** `validateBody` returning the errors instead of throwing them (a body that is not an object still throws). */
export function checkBody<T extends object>(dto: new () => T, body: unknown): CheckedBody<T> {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw Problems.validation([{ field: '', code: 'invalid_type', message: 'the body must be a JSON object' }]);
  }
  const shape = checkShape(shapeOf(dto), body as Record<string, unknown>);
  const instance = toInstance(dto, shape.rest);
  const rules = rulesOf(instance).filter((error) => !shape.refused.has(error.property));
  const own = hasBodyRules(instance) ? instance.bodyRules() : [];
  const errors = [...shape.errors, ...flatten(rules), ...own];
  const failed = new Set(errors.map((error) => error.field));
  for (const key of Object.keys(instance)) if (failed.has(key)) delete (instance as Record<string, unknown>)[key];
  return { value: instance, errors, omitted: shape.omitted };
}

/**
 * `plainToInstance(dto, rest, { enableImplicitConversion: false })`, built directly for a DTO on
 * which class-transformer holds no metadata for any of its fields (no @Type, @Transform, @Expose
 * or @Exclude): the transformer then does no more than this (a new instance, each value copied,
 * plain objects as new plain objects without `__proto__`, `constructor` or keys naming a method
 * of their prototype), and its generic walk cost about 1 % of a command. Any such metadata and
 * the transformer does it itself. `test/unit/platform/validation-quick-check.test.ts` holds the
 * two equal for every DTO of the service.
 */
export function toInstance<T extends object>(dto: new () => T, rest: Record<string, unknown>): T {
  if (!plainDto(dto, shapeOf(dto))) return plainToInstance(dto, rest, { enableImplicitConversion: false });
  const instance = new dto() as Record<string, unknown>;
  const prototype = dto.prototype as object;
  for (const key of Object.keys(rest)) {
    if (key === '__proto__' || key === 'constructor' || skipped(prototype, instance, key)) continue;
    instance[key] = plainCopy(rest[key]);
  }
  return instance as T;
}

const plainDtos = new WeakMap<object, boolean>();

function plainDto(dto: new () => object, shape: DtoShape): boolean {
  let plain = plainDtos.get(dto);
  if (plain === undefined) {
    const storage = defaultMetadataStorage;
    plain =
      storage.getStrategy(dto) === 'none' &&
      storage.getExposedMetadatas(dto).length === 0 &&
      storage.getExcludedMetadatas(dto).length === 0 &&
      [...shape.fields].every((field) => !storage.findTypeMetadata(dto, field) && storage.findTransformMetadatas(dto, field, TransformationType.PLAIN_TO_CLASS).length === 0);
    plainDtos.set(dto, plain);
  }
  return plain;
}

/** class-transformer leaves a key out when the target's prototype has it as its own without a setter (a method), or the target holds a function under it. */
function skipped(prototype: object, target: Record<string, unknown>, key: string): boolean {
  const descriptor = Object.getOwnPropertyDescriptor(prototype, key);
  return (descriptor !== undefined && !descriptor.set) || target[key] instanceof Function;
}

/** A JSON value copied as class-transformer copies a value it has no type for. */
function plainCopy(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(plainCopy);
  if (value === null || typeof value !== 'object') return value;
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    if (key === '__proto__' || key === 'constructor' || skipped(Object.prototype, copy, key)) continue;
    copy[key] = plainCopy((value as Record<string, unknown>)[key]);
  }
  return copy;
}

/** Items of a bulk array validated between two turns of the event loop. */
const SLICE = 250;

/**
 * `validateBody` for bodies carrying a large array of objects (check import: up to 10,000):
 * the items are transformed and validated in slices of SLICE, yielding to the event loop between
 * slices, so a maximal body does not hold every other request (and `/health/live`) for the
 * second or more that class-validator takes over it. Same answers as `validateBody`.
 */
export async function validateBodyInSlices<T extends object>(dto: new () => T, body: unknown): Promise<T> {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw Problems.validation([{ field: '', code: 'invalid_type', message: 'the body must be a JSON object' }]);
  }
  const dtoShape = shapeOf(dto);
  const shape = checkShape(dtoShape, body as Record<string, unknown>);
  const bulk = [...dtoShape.arrays].filter(([key, array]) => array.objects && Array.isArray(shape.rest[key])).map(([key]) => key);
  const top = { ...shape.rest };
  for (const key of bulk) delete top[key];
  const instance = plainToInstance(dto, top, { enableImplicitConversion: false }) as T & Record<string, unknown>;
  const rules = rulesOf(instance).filter((error) => !shape.refused.has(error.property) && !bulk.includes(error.property));
  const errors = [...shape.errors, ...flatten(rules)];
  let omitted = shape.omitted;
  for (const key of bulk) {
    const items = shape.rest[key] as unknown[];
    const min = dtoShape.arrays.get(key)?.min ?? null;
    if (min !== null && items.length < min) errors.push({ field: key, code: 'too_short', message: `must contain at least ${min} elements` });
    const converted: unknown[] = [];
    for (let start = 0; start < items.length; start += SLICE) {
      if (start > 0) await nextTurn();
      const slice = (plainToInstance(dto, { [key]: items.slice(start, start + SLICE) }, { enableImplicitConversion: false }) as Record<string, unknown[]>)[key];
      slice.forEach((item, offset) => {
        converted.push(item);
        for (const error of flatten(rulesOf(item as object), `${key}[${start + offset}]`)) {
          if (errors.length < MAX_LISTED_ERRORS) errors.push(error);
          else omitted++;
        }
      });
    }
    (instance as Record<string, unknown>)[key] = converted;
  }
  if (errors.length > 0) throw Problems.validation(errors, undefined, omitted);
  return instance;
}

/** A path id that is not a positive integer names nothing: 404, as for an unknown id. */
export function pathId(value: string, what = 'The resource'): number {
  if (!/^[1-9]\d{0,15}$/.test(value)) throw Problems.notFound(what);
  return Number(value);
}
