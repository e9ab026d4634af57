/** A node of a plan as EXPLAIN (FORMAT JSON) answers it, with the fields the plan tests read. */
export interface PlanNode {
  'Index Name'?: string;
  'Node Type'?: string;
  Schema?: string;
  'Actual Loops'?: number;
  'Actual Rows'?: number;
  Plans?: PlanNode[];
}

/** Every node of a plan, its root first. */
export const nodesOf = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(nodesOf)];

/** The root of the plan in the rows an EXPLAIN (FORMAT JSON) answers. */
export const planOf = (rows: Record<string, unknown>[]): PlanNode => (rows[0]['QUERY PLAN'] as { Plan: PlanNode }[])[0].Plan;
