// Records what Java makes of strings, for tests/test_protocol.py and tests/strategies/test_conformance.py:
// String#hashCode and String#getBytes(UTF_8), which decide a tag's code in the consume queue and a key's place on
// the MD5 ring.
// Usage: javac StringBytes.java && java StringBytes < cases.txt > bytes.txt
// Each input line is one string as hex UTF-16 code units separated by spaces (so lone surrogates survive the trip);
// each output line is its hashCode, a tab, and its UTF-8 bytes in hex.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;

public class StringBytes {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.US_ASCII));
        String line;
        while ((line = in.readLine()) != null) {
            StringBuilder s = new StringBuilder();
            for (String unit : line.trim().isEmpty() ? new String[0] : line.trim().split(" ")) {
                s.append((char) Integer.parseInt(unit, 16));
            }
            StringBuilder hex = new StringBuilder();
            for (byte b : s.toString().getBytes(StandardCharsets.UTF_8)) {
                hex.append(String.format("%02x", b));
            }
            System.out.println(s.toString().hashCode() + "\t" + hex);
        }
    }
}
