-- The change feed (docs/changes.md, "What MySQL needs"): the gateway's user, which the image
-- creates from MYSQL_USER with every privilege on MYSQL_DATABASE only, may also read the binary
-- log. One statement for MySQL and MariaDB alike: from MariaDB 10.5, REPLICATION CLIENT is the
-- old name of BINLOG MONITOR (SHOW GRANTS then says BINLOG MONITOR), so this serves the offline
-- stand-in of scripts/offline-images.sh too.
GRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO 'tablegate'@'%';
