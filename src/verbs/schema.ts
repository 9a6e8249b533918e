/**
 * A small JSON Schema validator for `protocol/schema.json`: the keywords that schema uses
 * (`$ref` to `#/$defs/…`, `type`, `enum`, `pattern`, `minLength`, `minimum`, `required`,
 * `properties`, `additionalProperties`, `propertyNames`, `items`, `minItems`, `maxItems`).
 * Returns every problem as `<path>: <what is wrong>`; an unknown keyword is itself a problem.
 */
export type Schema = Record<string, unknown>;

const KNOWN = new Set([
  "$schema",
  "title",
  "description",
  "$defs",
  "$ref",
  "type",
  "enum",
  "pattern",
  "minLength",
  "minimum",
  "required",
  "properties",
  "additionalProperties",
  "propertyNames",
  "items",
  "minItems",
  "maxItems",
]);

function typeOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
}

export function validate(root: Schema, schema: Schema, value: unknown, path = "$"): string[] {
  const problems: string[] = [];
  for (const word of Object.keys(schema))
    if (!KNOWN.has(word)) problems.push(`${path}: schema keyword ${word}`);
  if (typeof schema.$ref === "string") {
    const name = schema.$ref.replace(/^#\/\$defs\//, "");
    const target = (root.$defs as Record<string, Schema> | undefined)?.[name];
    if (!target) return [...problems, `${path}: no definition ${schema.$ref}`];
    return [...problems, ...validate(root, target, value, path)];
  }
  const type = typeOf(value);
  if (schema.type !== undefined) {
    const types = ([] as unknown[]).concat(schema.type);
    if (!types.includes(type) && !(type === "integer" && types.includes("number"))) {
      return [...problems, `${path}: is ${type}, not ${types.join(" or ")}`];
    }
  }
  if (Array.isArray(schema.enum) && !schema.enum.includes(value)) {
    problems.push(`${path}: ${JSON.stringify(value)} is not one of ${schema.enum.join(", ")}`);
  }
  if (typeof value === "string") {
    if (typeof schema.pattern === "string" && !new RegExp(schema.pattern, "u").test(value)) {
      problems.push(`${path}: ${JSON.stringify(value)} does not match ${schema.pattern}`);
    }
    if (typeof schema.minLength === "number" && value.length < schema.minLength)
      problems.push(`${path}: too short`);
  }
  if (typeof value === "number" && typeof schema.minimum === "number" && value < schema.minimum) {
    problems.push(`${path}: below ${schema.minimum}`);
  }
  if (Array.isArray(value)) {
    if (typeof schema.minItems === "number" && value.length < schema.minItems)
      problems.push(`${path}: too few items`);
    if (typeof schema.maxItems === "number" && value.length > schema.maxItems)
      problems.push(`${path}: too many items`);
    if (schema.items) {
      for (const [i, item] of value.entries())
        problems.push(...validate(root, schema.items as Schema, item, `${path}[${i}]`));
    }
  }
  if (type === "object") {
    const record = value as Record<string, unknown>;
    const props = (schema.properties ?? {}) as Record<string, Schema>;
    for (const name of (schema.required ?? []) as string[]) {
      if (!(name in record)) problems.push(`${path}: lacks ${name}`);
    }
    for (const [name, item] of Object.entries(record)) {
      const at = `${path}.${name}`;
      if (schema.propertyNames)
        problems.push(...validate(root, schema.propertyNames as Schema, name, `${at} (name)`));
      if (props[name]) problems.push(...validate(root, props[name], item, at));
      else if (schema.additionalProperties === false) problems.push(`${at}: not a field the schema knows`);
      else if (typeof schema.additionalProperties === "object") {
        problems.push(...validate(root, schema.additionalProperties as Schema, item, at));
      }
    }
  }
  return problems;
}
