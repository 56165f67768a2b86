import { h } from './dom.js';
import type { Approval } from './types.js';

/** A call waiting for approval, with its Approve and Reject buttons (each calls `decide`). */
export function approvalItem(
  approval: Approval,
  decide: (decision: 'approve' | 'reject') => void,
): HTMLLIElement {
  const label = `${approval.agent}: ${approval.message}`;
  return h(
    'li',
    { class: `approval risk-${approval.risk}` },
    h('p', {}, h('strong', { text: approval.agent }), ` (${approval.risk} risk): ${approval.message}`),
    approval.reason ? h('p', { class: 'reason', text: `Reason: ${approval.reason}` }) : null,
    h(
      'div',
      { class: 'row' },
      h('button', {
        type: 'button',
        onclick: () => decide('approve'),
        'aria-label': `Approve ${label}`,
        text: 'Approve',
      }),
      h('button', {
        type: 'button',
        class: 'danger',
        onclick: () => decide('reject'),
        'aria-label': `Reject ${label}`,
        text: 'Reject',
      }),
    ),
  );
}
