import { lazy, type ReactElement } from 'react';
import type { OperatorRole, Scope } from './lib/session';
import { Messages } from './views/Messages';
import { MessageDetail } from './views/MessageDetail';
import { Send } from './views/Send';
import { Balance } from './views/Balance';
import { Keys } from './views/Keys';
import { Senders } from './views/Senders';
import { Webhooks } from './views/Webhooks';
import { Inbound } from './views/Inbound';
import { OptOuts } from './views/OptOuts';
import { Overview } from './views/operator/Overview';
import { Accounts } from './views/operator/Accounts';
import { AccountDetail } from './views/operator/AccountDetail';
import { Senders as OperatorSenders } from './views/operator/Senders';
import { Routes as OperatorRoutes } from './views/operator/Routes';
import { Blocklist } from './views/operator/Blocklist';
import { Messages as OperatorMessages } from './views/operator/Messages';
import { MessageStory } from './views/operator/MessageStory';
import { AuditLog } from './views/operator/AuditLog';
import { Operators } from './views/operator/Operators';

// ECharts is most of the console's weight: it loads with the Insights view, when that is opened.
const Insights = lazy(() => import('./views/Insights').then((module) => ({ default: module.Insights })));

/** One view of the console: its route (under /console), its entry in the navigation, and who may see it. */
export interface View {
  path: string;
  /** The navigation's label; a view without one is reached through another (a message's detail). */
  label?: string;
  element: ReactElement;
  /** A customer view: the scope it needs to be listed. */
  scope?: Scope;
  /** An operator view: the least role that sees it, the `x-required-role` of the operations it reads (every role when absent). */
  role?: OperatorRole;
}

export const customerViews: View[] = [
  { path: 'messages', label: 'Messages', element: <Messages />, scope: 'sms:read' },
  { path: 'messages/:id', element: <MessageDetail />, scope: 'sms:read' },
  { path: 'send', label: 'Send', element: <Send />, scope: 'sms:send' },
  { path: 'insights', label: 'Insights', element: <Insights />, scope: 'sms:read' },
  { path: 'balance', label: 'Balance', element: <Balance />, scope: 'balance:read' },
  { path: 'keys', label: 'Keys', element: <Keys />, scope: 'keys:read' },
  { path: 'senders', label: 'Senders', element: <Senders />, scope: 'senders:read' },
  { path: 'webhooks', label: 'Webhooks', element: <Webhooks />, scope: 'webhooks:read' },
  { path: 'inbound', label: 'Inbound', element: <Inbound />, scope: 'sms:read' },
  { path: 'opt-outs', label: 'Opt-outs', element: <OptOuts />, scope: 'sms:read' },
];

/**
 * The operator section, under /console/operator/. Every role reads what these views list; the
 * buttons inside each view that write are shown by the role each operation requires.
 */
export const operatorViews: View[] = [
  { path: 'operator', label: 'Overview', element: <Overview /> },
  { path: 'operator/accounts', label: 'Accounts', element: <Accounts /> },
  { path: 'operator/accounts/:id', element: <AccountDetail /> },
  { path: 'operator/messages', label: 'Messages', element: <OperatorMessages /> },
  { path: 'operator/messages/:id', element: <MessageStory /> },
  { path: 'operator/senders', label: 'Senders', element: <OperatorSenders /> },
  { path: 'operator/routes', label: 'Routes', element: <OperatorRoutes /> },
  { path: 'operator/blocklist', label: 'Blocklist', element: <Blocklist /> },
  { path: 'operator/audit-log', label: 'Audit log', element: <AuditLog /> },
  // GET /admin/operators is an admin's.
  { path: 'operator/operators', label: 'Operators', element: <Operators />, role: 'admin' },
];
