/** A customer record as a CRM would return it: personal data that must not end up in traces. */
export interface Customer {
  userId: string;
  email: string;
  plan: 'enterprise' | 'team' | 'free';
  /** Open support tickets; three or more get priority too. */
  openTickets: number;
}

/** A stand-in for a CRM, so the example runs offline. */
export const CUSTOMERS: readonly Customer[] = [
  { userId: 'ada', email: 'ada@example.com', plan: 'enterprise', openTickets: 0 },
  { userId: 'grace', email: 'grace@example.com', plan: 'team', openTickets: 4 },
  { userId: 'linus', email: 'linus@example.com', plan: 'free', openTickets: 1 },
];

/** Looks a customer up by user id. */
export function findCustomer(userId: string | undefined): Customer | undefined {
  return CUSTOMERS.find((customer) => customer.userId === userId);
}
