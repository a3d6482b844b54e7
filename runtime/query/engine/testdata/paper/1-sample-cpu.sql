-- §4.4: quantify the non-enumerable cpu stream by sampling it every 100 ms.
SELECT * FROM SAMPLE(cpu, 100ms)
