/**
 * Which served types could run script in the API's origin when opened in a browser: HTML, XHTML,
 * SVG, any XML (an XML document may carry XHTML-namespaced `<script>`), XSLT and JavaScript.
 * Those are sent as attachments under `Content-Security-Policy: sandbox` (docs/uploads.md).
 */

const ACTIVE_TYPES = new Set([
  'text/html',
  'application/xhtml+xml',
  'image/svg+xml',
  'text/xml',
  'application/xml',
  'text/xsl',
  'application/xslt+xml',
  'text/javascript',
  'application/javascript',
  'application/x-javascript',
  'text/ecmascript',
  'application/ecmascript',
  'text/jscript',
  'multipart/x-mixed-replace',
]);

/** The type's essence: lower case, parameters dropped (`Text/HTML; charset=utf-8` → `text/html`). */
export function mediaTypeEssence(contentType: string): string {
  return (contentType.split(';', 1)[0] ?? '').trim().toLowerCase();
}

export function isActiveContent(contentType: string): boolean {
  const essence = mediaTypeEssence(contentType);
  return (
    ACTIVE_TYPES.has(essence) ||
    essence.endsWith('+xml') ||
    essence.endsWith('/xml') ||
    essence.includes('javascript') ||
    essence.includes('ecmascript')
  );
}
