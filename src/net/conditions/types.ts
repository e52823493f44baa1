/**
 * One link condition = one stage a packet passes through in one direction of the emulated link.
 *
 * A stage is a pure function of the packet's arrival time at it and its own state: it returns the
 * time the packet leaves it, or {@link DROP}. Because every stage computes the departure when the
 * packet arrives, a direction of the link is just the stages composed in order, and the relay only
 * has to hold each packet until the time the last stage returned (see `src/net/model.ts`).
 *
 * Times are milliseconds on one monotonic clock (the relay's CLOCK_MONOTONIC; a fake clock in tests).
 */

/** Returned by {@link LinkCondition.admit} when the packet is lost or dropped. */
export const DROP = -1;

/** Why a packet was dropped: counted per reason in the link statistics. */
export type DropReason = 'loss' | 'queue';

export interface LinkCondition {
  /** The registry key: the file name under `src/net/conditions/`. */
  readonly kind: string;
  /** The reason recorded when this stage drops a packet. */
  readonly dropReason?: DropReason;
  /**
   * A packet of `sizeBytes` (the whole IP packet) arrives at `atMs`. Returns its departure time
   * (≥ `atMs`) or {@link DROP}. Calls come in non-decreasing `atMs` order, except after a stage that
   * reorders (jitter with `reorder`), which is therefore always the last stage.
   */
  admit(sizeBytes: number, atMs: number): number;
}
