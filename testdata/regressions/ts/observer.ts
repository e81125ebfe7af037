export class QueryObserver<TData, TError> extends Subscribable {
  #client: QueryClient

  fetchOptimistic(
    options: QueryObserverOptions<
      TQueryFnData,
      TError,
      TData
    >,
  ): Promise<QueryObserverResult<TData, TError>> {
    const defaultedOptions = this.#client.defaultQueryOptions(options)
    const query = this.#client
      .getQueryCache()
      .build(this.#client, defaultedOptions)
    query.isFetchingOptimistic = true
    return query.fetch().then(() => this.createResult(query, defaultedOptions))
  }
}
