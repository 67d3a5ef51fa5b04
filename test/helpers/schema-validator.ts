import { readFileSync } from 'node:fs';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';

/** schemas/: the JSON Schemas the package ships (scripts/generate-schemas.mjs writes them from the types). */
export const SCHEMAS_DIR = new URL('../../schemas/', import.meta.url);

/** Ajv in strict mode, with formats (`date-time`): what a careful backend would validate with. */
export function schemaValidator(): (file: string) => ValidateFunction {
  const ajv = new Ajv({ strict: true, allErrors: true });
  addFormats.default(ajv);
  const compiled = new Map<string, ValidateFunction>();
  return (file) => {
    let validate = compiled.get(file);
    if (!validate) {
      validate = ajv.compile(JSON.parse(readFileSync(new URL(file, SCHEMAS_DIR), 'utf8')) as object);
      compiled.set(file, validate);
    }
    return validate;
  };
}

/** The validation errors of `value` against schemas/`file`, as readable lines; empty when it is valid. */
export function schemaErrors(validate: ValidateFunction, value: unknown): string[] {
  if (validate(value)) return [];
  return (validate.errors ?? []).map(
    (error) => `${error.instancePath || '/'} ${error.message} ${JSON.stringify(error.params)}`,
  );
}
