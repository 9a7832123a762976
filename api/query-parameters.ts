import type Ajv from 'ajv';
import type { ValidateFunction } from 'ajv';
import type { PropertyError } from '../domain/errors';
import type { OpenApiDocument, OpenApiOperation } from '../spec';
import { operationParameters } from '../spec';
import { compileRef } from '../spec/ajv';
import { DOCUMENT_ID, textFault, validationError } from './request-validation';

interface CompiledParameter {
  name: string;
  isArray: boolean;
  scalarType: string | undefined;
  /** What to say of a bad value when ajv's first complaint would say less. */
  expected: string | undefined;
  validate: ValidateFunction;
}

/** Range filters were spelled `__lt` before IX-API 2.5; both spellings are accepted. */
const OLD_RANGE_SUFFIX = /__(lt|lte|gt|gte)$/;

/**
 * Digits that make an integer JavaScript holds exactly. Longer ones (309 digits become
 * Infinity, 2^63 loses its last digits) stay text, which the integer schema refuses.
 */
function safeInteger(raw: string): number | string {
  if (!/^-?\d+$/.test(raw.trim())) return raw;
  const value = Number(raw);
  return Number.isSafeInteger(value) ? value : raw;
}

function coerce(parameter: CompiledParameter, raw: string): unknown {
  switch (parameter.scalarType) {
    case 'integer':
      return safeInteger(raw);
    case 'number':
      return raw.trim() !== '' && !Number.isNaN(Number(raw)) ? Number(raw) : raw;
    case 'boolean':
      return raw === 'true' ? true : raw === 'false' ? false : raw;
    default:
      return raw;
  }
}

/** `Must be an integer from 0 to 2147483647.`, from the bounds (or values) of an integer parameter's schema. */
function integerRange(schema: Record<string, unknown>): string {
  const { minimum, maximum, enum: values } = schema;
  if (Array.isArray(values)) return `Must be one of: ${values.join(', ')}.`;
  if (typeof minimum === 'number' && typeof maximum === 'number')
    return `Must be an integer from ${minimum} to ${maximum}.`;
  if (typeof minimum === 'number') return `Must be an integer of at least ${minimum}.`;
  if (typeof maximum === 'number') return `Must be an integer of at most ${maximum}.`;
  return 'Must be an integer.';
}

export type QueryParser = (query: Record<string, unknown>) => Record<string, unknown>;

/**
 * Compiles a parser for an operation's query string from its declared parameters: values arrive
 * as strings (arrays as `a,b` or as repeated parameters), are converted to the declared type and
 * validated; every bad value is reported by parameter name. Undeclared parameters are ignored.
 */
export function compileQueryParser(
  ajv: Ajv,
  document: OpenApiDocument,
  path: string,
  method: string,
  operation: OpenApiOperation,
): { parse: QueryParser; names: string[] } {
  const compiled: CompiledParameter[] = operationParameters(document, path, method, operation, 'query').map(
    ([parameter, at]) => {
      const schema = parameter.schema ?? {};
      const isArray = schema.type === 'array';
      const scalarType = isArray ? schema.items?.type : schema.type;
      return {
        name: parameter.name,
        isArray,
        scalarType,
        expected: scalarType === 'integer' && !isArray ? integerRange(schema) : undefined,
        validate: compileRef(ajv, `${DOCUMENT_ID}#${at}/schema`),
      };
    },
  );
  const parse: QueryParser = (query) => {
    const normalised: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(query))
      normalised[key.replace(OLD_RANGE_SUFFIX, '_$1')] = value;
    const values: Record<string, unknown> = {};
    const problems: PropertyError[] = [];
    for (const parameter of compiled) {
      const raw = normalised[parameter.name];
      if (raw === undefined) continue;
      const texts = (Array.isArray(raw) ? raw : [raw]).map(String);
      const fault = texts.map(textFault).find((reason) => reason !== undefined);
      if (fault) {
        problems.push({ name: parameter.name, reason: fault });
        continue;
      }
      let value: unknown;
      if (parameter.isArray) {
        value = texts
          .flatMap((text) => text.split(','))
          .filter((text) => text !== '')
          .map((text) => coerce(parameter, text));
      } else if (texts.length > 1) {
        problems.push({ name: parameter.name, reason: 'Give this parameter once.' });
        continue;
      } else {
        value = coerce(parameter, texts[0]);
      }
      if (!parameter.validate(value)) {
        const error = parameter.validate.errors?.find((e) => e.keyword !== 'if');
        const reason = parameter.expected ?? `${(error?.message ?? 'is invalid').replace(/^must/, 'Must')}.`;
        problems.push({ name: parameter.name, reason });
        continue;
      }
      values[parameter.name] = value;
    }
    if (problems.length) throw validationError(problems);
    return values;
  };
  return { parse, names: compiled.map((p) => p.name) };
}
