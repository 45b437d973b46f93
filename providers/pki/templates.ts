// Templated parameter values: `${POD_NAME}`, `${POD_NAMESPACE}`, `${SERVICE_ACCOUNT_NAME}`
// and `${POD_UID}` (cert-manager csi-driver's spelling) from the Mount's pod attributes.
// Pure: the caller validates what the expansion yields (a DNS name, a URI).
import { quoted } from '../../lib/untrusted-text.js';
import {
  POD_NAME_ATTRIBUTE,
  POD_NAMESPACE_ATTRIBUTE,
  POD_UID_ATTRIBUTE,
  SERVICE_ACCOUNT_ATTRIBUTE,
} from '../framework/pod-info.js';
import { invalidParameter, podInfoMissing } from './pki-errors.js';

/** Template variables and the Mount attribute each comes from. */
export const TEMPLATE_VARIABLES: Readonly<Record<string, string>> = Object.freeze({
  POD_NAME: POD_NAME_ATTRIBUTE,
  POD_NAMESPACE: POD_NAMESPACE_ATTRIBUTE,
  SERVICE_ACCOUNT_NAME: SERVICE_ACCOUNT_ATTRIBUTE,
  POD_UID: POD_UID_ATTRIBUTE,
});

/**
 * `value` with each `${VARIABLE}` replaced from `attributes`. An unknown variable or an
 * unterminated `${` is INVALID_ARGUMENT naming `field`; a known variable whose attribute
 * is absent or empty is FAILED_PRECONDITION (PodInfoMissing). A `$` not followed by `{`
 * is literal.
 */
export function expandTemplate(value: string, field: string, attributes: Readonly<Record<string, string>>): string {
  let out = '';
  let at = 0;
  for (;;) {
    const start = value.indexOf('${', at);
    if (start < 0) return out + value.slice(at);
    const end = value.indexOf('}', start + 2);
    if (end < 0)
      throw invalidParameter(
        `${field}: unterminated "\${" (templates are \${POD_NAME}, \${POD_NAMESPACE}, \${SERVICE_ACCOUNT_NAME}, \${POD_UID})`,
      );
    const name = value.slice(start + 2, end);
    const attribute = TEMPLATE_VARIABLES[name];
    if (attribute === undefined || !Object.prototype.hasOwnProperty.call(TEMPLATE_VARIABLES, name)) {
      throw invalidParameter(
        `${field}: unknown template variable ${quoted(`\${${name}}`, 40)} (known: \${POD_NAME}, \${POD_NAMESPACE}, \${SERVICE_ACCOUNT_NAME}, \${POD_UID})`,
      );
    }
    const replacement = attributes[attribute];
    if (replacement === undefined || replacement === '') {
      throw podInfoMissing(
        `${field} uses \${${name}} but the Mount has no ${attribute} (the CSIDriver needs podInfoOnMount: true)`,
      );
    }
    out += value.slice(at, start) + replacement;
    at = end + 1;
  }
}
