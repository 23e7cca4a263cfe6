// The few JSON Schema keywords the store's schemas use (lib/stored-verdict.schema.json): type
// (one or a list), properties, required, additionalProperties (false or a schema), items,
// minItems, maxItems and a local $ref ("#/$defs/name"). No dependency: the build runs with
// what `npm ci` installs for the page. Pure: problems in words, [] when the value fits.

const TYPES = {
  null: (v) => v === null,
  boolean: (v) => typeof v === 'boolean',
  integer: (v) => Number.isInteger(v),
  number: (v) => typeof v === 'number' && Number.isFinite(v),
  string: (v) => typeof v === 'string',
  array: (v) => Array.isArray(v),
  object: (v) => v !== null && typeof v === 'object' && !Array.isArray(v),
};

/** Each way `value` departs from `schema` ("verdict.gated[0].ci: not array or null"); [] when none. */
export function check(schema, value, where = 'value', root = schema) {
  if (schema.$ref) {
    const name = schema.$ref.replace(/^#\/\$defs\//, '');
    return check(root.$defs?.[name] ?? {}, value, where, root);
  }
  const types = schema.type === undefined ? [] : [schema.type].flat();
  if (types.length && !types.some((t) => TYPES[t]?.(value))) return [`${where}: not ${types.join(' or ')}`];
  const problems = [];
  if (TYPES.object(value)) {
    for (const key of schema.required ?? []) {
      if (!Object.hasOwn(value, key)) problems.push(`${where}: no ${key}`);
    }
    for (const [key, item] of Object.entries(value)) {
      const sub = schema.properties?.[key] ?? schema.additionalProperties;
      if (sub === false) problems.push(`${where}: ${key} is not a field of it`);
      else if (sub && sub !== true) problems.push(...check(sub, item, `${where}.${key}`, root));
    }
  }
  if (Array.isArray(value)) {
    if (schema.minItems !== undefined && value.length < schema.minItems) problems.push(`${where}: fewer than ${schema.minItems} items`);
    if (schema.maxItems !== undefined && value.length > schema.maxItems) problems.push(`${where}: more than ${schema.maxItems} items`);
    if (schema.items) value.forEach((item, i) => problems.push(...check(schema.items, item, `${where}[${i}]`, root)));
  }
  return problems;
}
