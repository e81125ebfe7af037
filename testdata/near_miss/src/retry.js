function retry(task, attempts) {
  let failure = null;
  for (let i = 0; i < attempts; i++) {
    try {
      return task(i);
    } catch (error) {
      failure = error;
    }
  }
  throw failure;
}
