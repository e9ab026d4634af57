import type { ReactNode } from 'react';

/** What an empty list means, and what to do next. */
export function EmptyState({ children }: { children: ReactNode }) {
  return <div className="empty">{children}</div>;
}
