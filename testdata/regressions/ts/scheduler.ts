export class VirtualAction<T> extends AsyncAction<T> {
  protected active: boolean = true;

  /**
   * Creates an action that runs on a virtual clock.
   *
   * @param scheduler The scheduler that owns the clock.
   * @param work What the action does when it runs.
   */
  constructor(
    protected scheduler: VirtualTimeScheduler,
    protected work: (this: SchedulerAction<T>, state?: T) => void,
    protected index: number = (scheduler.index += 1)
  ) {
    super(scheduler, work);
    this.index = scheduler.index = index;
  }
}
