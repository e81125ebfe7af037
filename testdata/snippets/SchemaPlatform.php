<?php

namespace App\Schema;

final class SchemaPlatform
{
    public const WITH_INDEXES = 1;
    public const WITH_KEYS = 2;

    public function createTableStatements(Table $table, $flags = self::WITH_INDEXES)
    {
        if (! is_int($flags)) {
            throw new \InvalidArgumentException(
                'The second argument of createTableStatements() must be an integer.',
            );
        }

        if (($flags & self::WITH_INDEXES) === 0) {
            Deprecations::warn(
                'app/schema',
                'https://example.org/schema/changes/42',
                'Creating a table without its indexes is deprecated.',
            );
        }

        if (($flags & self::WITH_KEYS) === 0) {
            Deprecations::warn(
                'app/schema',
                'https://example.org/schema/changes/43',
                'Creating a table without its foreign keys is deprecated.',
            );
        }

        return $this->buildStatements(
            $table,
            ($flags & self::WITH_INDEXES) > 0,
            ($flags & self::WITH_KEYS) > 0,
        );
    }
}
