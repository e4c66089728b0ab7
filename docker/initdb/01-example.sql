-- Example schema: a small shop. The one copy of it: `docker compose up` mounts this directory, and
-- the mysql image runs it once, on the first start with an empty volume, in the database
-- MYSQL_DATABASE (`shop`), so it names none; `tablegate demo` runs it in `tablegate_demo`.
-- Written for MySQL 8.4 and MariaDB 10.11 alike (test/integration/production-start.test.ts and
-- demo.test.ts load it into MariaDB and serve it).
SET NAMES utf8mb4;

CREATE TABLE customers (
  id INT UNSIGNED AUTO_INCREMENT PRIMARY KEY,
  name VARCHAR(100) NOT NULL,
  email VARCHAR(254) NOT NULL UNIQUE,
  city VARCHAR(100) NULL,
  created_at DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);

CREATE TABLE products (
  id INT UNSIGNED AUTO_INCREMENT PRIMARY KEY,
  name VARCHAR(100) NOT NULL,
  category VARCHAR(50) NOT NULL,
  price DECIMAL(10, 2) NOT NULL,
  stock INT NOT NULL DEFAULT 0,
  image_url VARCHAR(500) NULL
);

CREATE TABLE orders (
  id INT UNSIGNED AUTO_INCREMENT PRIMARY KEY,
  customer_id INT UNSIGNED NOT NULL,
  ordered_at DATETIME NOT NULL,
  status ENUM('new', 'paid', 'shipped', 'cancelled') NOT NULL DEFAULT 'new',
  CONSTRAINT fk_orders_customer FOREIGN KEY (customer_id) REFERENCES customers (id)
);

CREATE TABLE order_items (
  order_id INT UNSIGNED NOT NULL,
  product_id INT UNSIGNED NOT NULL,
  quantity INT UNSIGNED NOT NULL,
  unit_price DECIMAL(10, 2) NOT NULL,
  PRIMARY KEY (order_id, product_id),
  CONSTRAINT fk_items_order FOREIGN KEY (order_id) REFERENCES orders (id),
  CONSTRAINT fk_items_product FOREIGN KEY (product_id) REFERENCES products (id)
);

CREATE VIEW order_totals AS
SELECT o.id AS order_id, c.name AS customer, o.ordered_at, o.status,
       SUM(i.quantity * i.unit_price) AS total
FROM orders o
JOIN customers c ON c.id = o.customer_id
JOIN order_items i ON i.order_id = o.id
GROUP BY o.id, c.name, o.ordered_at, o.status;

INSERT INTO customers (id, name, email, city, created_at) VALUES
  (1, 'Grace Hopper', 'grace@example.com', 'New York', '2024-01-15 09:30:00'),
  (2, 'Lena Müller', 'lena@example.com', 'Zürich', '2024-02-03 14:05:12'),
  (3, 'Amina Okafor', 'amina@example.com', 'Lagos', '2024-03-21 18:45:00'),
  (4, 'Sofia Rossi', 'sofia@example.com', NULL, '2024-04-02 08:00:00');

INSERT INTO products (id, name, category, price, stock) VALUES
  (1, 'Green tea, 100 g', 'tea', 6.50, 120),
  (2, 'Earl Grey tea, 250 g', 'tea', 12.90, 40),
  (3, 'Teapot, cast iron', 'kitchen', 49.00, 8),
  (4, 'Espresso beans, 1 kg', 'coffee', 24.75, 30),
  (5, 'Milk frother (Milchaufschäumer)', 'kitchen', 19.99, 0);

INSERT INTO orders (id, customer_id, ordered_at, status) VALUES
  (1, 1, '2024-05-01 10:12:00', 'shipped'),
  (2, 2, '2024-05-03 16:40:30', 'paid'),
  (3, 1, '2024-05-07 07:05:00', 'new');

INSERT INTO order_items (order_id, product_id, quantity, unit_price) VALUES
  (1, 1, 2, 6.50),
  (1, 3, 1, 49.00),
  (2, 4, 1, 24.75),
  (3, 2, 3, 12.90);

-- Stored routines, served at /rpc/<name> (docs/routines.md). Each body is one statement, without
-- BEGIN … END: Docker Compose runs this file through the mysql client, which splits it at every
-- `;`, and the demo and the tests send it whole, where DELIMITER does not exist.
CREATE PROCEDURE customer_orders(IN customer INT UNSIGNED)
  SELECT o.id, o.ordered_at, o.status, t.total
  FROM orders o JOIN order_totals t ON t.order_id = o.id
  WHERE o.customer_id = customer ORDER BY o.id;

CREATE PROCEDURE customer_summary(IN customer INT UNSIGNED, OUT order_count INT, OUT spent DECIMAL(10, 2))
  SELECT COUNT(*), COALESCE(SUM(t.total), 0) INTO order_count, spent
  FROM orders o JOIN order_totals t ON t.order_id = o.id
  WHERE o.customer_id = customer;

CREATE PROCEDURE add_item(IN order_no INT UNSIGNED, IN product INT UNSIGNED, IN quantity INT UNSIGNED)
  INSERT INTO order_items (order_id, product_id, quantity, unit_price)
  SELECT order_no, id, quantity, price FROM products WHERE id = product;

CREATE FUNCTION customer_total(customer INT UNSIGNED, day DATE) RETURNS DECIMAL(10, 2) READS SQL DATA
  RETURN (SELECT COALESCE(SUM(i.quantity * i.unit_price), 0)
          FROM orders o JOIN order_items i ON i.order_id = o.id
          WHERE o.customer_id = customer AND o.ordered_at < day + INTERVAL 1 DAY);
