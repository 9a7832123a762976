import type Ajv from 'ajv';
import type { ValidateFunction } from 'ajv';
import type { PropertyError } from '../domain/errors';
import { ValidationError } from '../domain/errors';
import type { OpenApiDocument, OpenApiOperation } from '../spec';
import { operationParameters } from '../spec';
import { DOCUMENT_ID } from './request-validation';

interface CompiledParameter {
  name: string;
  isArray: boolean;
  scalarType: string | undefined;
  validate: ValidateFunction;
}

/** Range filters were spelled `__lt` before IX-API 2.5; both spellings are accepted. */
const OLD_RANGE_SUFFIX = /__(lt|lte|gt|gte)$/;

function coerce(parameter: CompiledParameter, raw: string): unknown {
  switch (parameter.scalarType) {
    case 'integer':
      return /^-?\d+$/.test(raw.trim()) ? Number(raw) : raw;
    case 'number':
      return raw.trim() !== '' && !Number.isNaN(Number(raw)) ? Number(raw) : raw;
    case 'boolean':
      return raw === 'true' ? true : raw === 'false' ? false : raw;
    default:
      return raw;
  }
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
      return {
        name: parameter.name,
        isArray,
        scalarType: isArray ? schema.items?.type : schema.type,
        validate: ajv.compile({ $ref: `${DOCUMENT_ID}#${at}/schema` }),
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
        const reason = parameter.validate.errors?.[0]?.message ?? 'is invalid';
        problems.push({ name: parameter.name, reason: `${reason.replace(/^must/, 'Must')}.` });
        continue;
      }
      values[parameter.name] = value;
    }
    if (problems.length) throw new ValidationError(problems);
    return values;
  };
  return { parse, names: compiled.map((p) => p.name) };
}
