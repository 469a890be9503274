/* The lesson schema's compiled validator (lessons/schema/plugin.ts). */
declare module 'virtual:lesson-schema' {
  export interface SchemaError {
    instancePath: string;
    schemaPath: string;
    keyword: string;
    params: Record<string, unknown>;
    message?: string;
  }
  export const validate: ((x: unknown) => boolean) & { errors?: SchemaError[] | null };
  /** the schema's shape (properties, items, additionalProperties, $ref, oneOf: true) with each node's errorMessage */
  export interface SchemaNode {
    properties?: Record<string, SchemaNode>;
    definitions?: Record<string, SchemaNode>;
    items?: SchemaNode;
    additionalProperties?: SchemaNode;
    $ref?: string;
    errorMessage?: string;
    oneOf?: true;
  }
  export const tree: SchemaNode;
}
