/** Where Swagger UI is served (docs.ts), for the headers every docs page carries (security-headers.ts). */
export const DOCS_PREFIX = '/docs';
