package ach;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * The Java side of the binding's figure: ns per call of ach_validate("transaction",
 * json) plus the freeing of its verdict, on the typical valid transaction
 * java/bench/validate_bench.c times, after a warm-up; the best of 5 rounds.
 *
 * <p>Prints two lines:
 * <ul>
 *   <li>{@code java ns_per_call N}: {@link Validation#validateTransaction(String)}, the
 *       binding's public call, from a Java String to a parsed {@link Validation.Result}
 *       (encoding, a confined arena, the downcall, copying the verdict out,
 *       ach_buffer_free, parsing it);
 *   <li>{@code java_downcall ns_per_call N}: the same C calls made by hand from
 *       Java on a native string made once, as the C program makes them: what the
 *       FFM downcalls themselves cost.
 * </ul>
 *
 * <p>Usage: ValidateBench [SECONDS] (default 2 per figure, after a warm-up of at least 1 s). Needs
 * --enable-native-access=ALL-UNNAMED and libach (see Native).
 */
@SuppressWarnings("restricted")
public final class ValidateBench {
    /** Keep in step with validate_bench.c's TRANSACTION. */
    static final String TRANSACTION =
            "{\"partner_id\":\"par_0123456789abcdefghijKL\",\"merchant_id\":\"mer_0123456789abcdefghijKL\","
            + "\"amount\":\"125.50\",\"description\":\"Invoice 42\",\"type\":\"debit\",\"standard_entry_class\":\"PPD\","
            + "\"customer\":{\"name\":\"Ada Lovelace\",\"routing_number\":\"021000021\",\"account_number\":\"123456789\","
            + "\"account_type\":\"checking\"}}";

    interface Call {
        long run();
    }

    static long sink;

    static double measure(double seconds, Call call) {
        long warm = System.nanoTime() + (long) (Math.max(1.0, seconds) * 1e9);
        while (System.nanoTime() < warm) { // warm-up: the JIT compiles the path
            for (int i = 0; i < 1000; i++) sink += call.run();
        }
        long calls = 1000;
        for (;;) { // size a round at about seconds / 5
            long t0 = System.nanoTime();
            for (long i = 0; i < calls; i++) sink += call.run();
            if (System.nanoTime() - t0 > seconds * 1e9 / 5) break;
            calls *= 2;
        }
        double best = Double.MAX_VALUE;
        for (int round = 0; round < 5; round++) {
            long t0 = System.nanoTime();
            for (long i = 0; i < calls; i++) sink += call.run();
            best = Math.min(best, (System.nanoTime() - t0) / (double) calls);
        }
        return best;
    }

    public static void main(String[] args) throws Throwable {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 2.0;
        if (!Validation.validateTransaction(TRANSACTION).valid()) {
            System.err.println("the bench transaction is not valid: " + Validation.validateTransaction(TRANSACTION));
            System.exit(1);
        }
        double binding = measure(seconds, () -> Validation.validateTransaction(TRANSACTION).errors().size() + 1);

        Arena global = Arena.global();
        MemorySegment kind = global.allocateFrom("transaction");
        MemorySegment json = global.allocateFrom(TRANSACTION);
        MemorySegment out = global.allocate(Native.BUFFER);
        double downcall = measure(seconds, () -> {
            try {
                int r = (int) Native.VALIDATE.invokeExact(kind, json, out);
                if (r != 0) throw Native.failure(r);
                long first = out.get(java.lang.foreign.ValueLayout.ADDRESS, 0).reinterpret(1).get(JAVA_BYTE, 0)
                        + out.get(java.lang.foreign.ValueLayout.JAVA_LONG, 8);
                Native.FREE.invokeExact(out);
                return first;
            } catch (Throwable t) {
                throw Native.rethrow(t);
            }
        });
        System.out.printf("java ns_per_call %.0f%n", binding);
        System.out.printf("java_downcall ns_per_call %.0f%n", downcall);
        if (sink == 42) System.out.println();
    }
}
