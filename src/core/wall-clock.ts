/** A wall clock in epoch milliseconds: Date.now, or an injected one (a test skewing one generator's clock). */
export type WallClock = () => number

export const systemClock: WallClock = () => Date.now()
