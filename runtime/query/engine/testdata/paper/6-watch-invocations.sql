-- §1, the security specialist: a report whenever a particular function is
-- invoked.
SELECT time, goroutine, function, error FROM calls
WHERE function = 'example.com/shop.(*Store).Save'
