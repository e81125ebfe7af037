class Settings:
    def __init__(self, host, port, user, password, database, timeout, retries, backoff, pool, ssl, verbose):
        self.host = host
        self.port = port
        self.user = user
        self.password = password
        self.database = database
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self.pool = pool
        self.ssl = ssl
        self.verbose = verbose
