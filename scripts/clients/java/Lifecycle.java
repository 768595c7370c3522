import ach.client.ApiClient;
import ach.client.ApiException;
import ach.client.api.CustomersApi;
import ach.client.api.FeedsApi;
import ach.client.api.MerchantsApi;
import ach.client.api.OperatorApi;
import ach.client.api.ReferenceApi;
import ach.client.api.TransactionsApi;
import ach.client.model.ClockRequest;
import ach.client.model.CustomerRequest;
import ach.client.model.Failure;
import ach.client.model.MerchantApplication;
import ach.client.model.NewPartner;
import ach.client.model.Approval;
import ach.client.model.StatusChange;
import ach.client.model.TransactionRequest;
import ach.client.model.TransactionView;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.FileInputStream;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * A partner's lifecycle through the Java client openapi-generator made from
 * docs/openapi.json (scripts/clients-test), against `achd serve --sandbox`; then
 * every example of the document through the generated models and back.
 *
 * Bodies are the generated models (read from the repository's example requests
 * by the client's own ObjectMapper); answers are read as the generated models
 * parse them: a status the document does not describe, or an answer its model
 * cannot hold, fails the run.
 *
 * Arguments: PUBLIC_URL OPERATOR_URL OPERATOR_KEY REPOSITORY_ROOT TLS_CERT_PEM.
 */
public final class Lifecycle {
    private static final List<String> failures = new ArrayList<>();

    private static void expect(String what, boolean ok, Object detail) {
        if (!ok) {
            failures.add(what + ": " + detail);
        }
    }

    private static ApiClient client(String url, String key, SSLContext tls) {
        ApiClient c = new ApiClient();
        c.setHttpClientBuilder(HttpClient.newBuilder().sslContext(tls));
        c.updateBaseUri(url);
        String basic = Base64.getEncoder().encodeToString((key + ":").getBytes(StandardCharsets.UTF_8));
        c.setRequestInterceptor(b -> b.header("Authorization", "Basic " + basic));
        return c;
    }

    private static SSLContext trusting(String pem) throws Exception {
        KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
        store.load(null, null);
        try (FileInputStream in = new FileInputStream(pem)) {
            store.setCertificateEntry("achd", CertificateFactory.getInstance("X.509").generateCertificate(in));
        }
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(store);
        SSLContext ctx = SSLContext.getInstance("TLS");
        ctx.init(null, tmf.getTrustManagers(), null);
        return ctx;
    }

    public static void main(String[] args) throws Exception {
        String publicUrl = args[0];
        String operatorUrl = args[1];
        String operatorKey = args[2];
        Path root = Path.of(args[3]);
        SSLContext tls = trusting(args[4]);
        // The client's own mapper, strict about members: a model that cannot hold
        // a member of a body or an example fails the run (and a oneOf, which the
        // generated code resolves by trying each branch, resolves to one branch).
        ObjectMapper json = new ApiClient().getObjectMapper().copy()
                .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);

        OperatorApi op = new OperatorApi(client(operatorUrl, operatorKey, tls));
        var partnerMade = op.adminCreatePartner(new NewPartner().name("Generated Java Client")).getPayload();
        String pid = partnerMade.getPartnerId();
        ApiClient partner = client(publicUrl, partnerMade.getApiKey(), tls);

        ObjectNode app = (ObjectNode) json.readTree(root.resolve("examples/requests/merchant.json").toFile());
        app.put("partner_id", pid);
        ObjectNode velocities = (ObjectNode) app.get("velocities");
        velocities.put("decline_duplicates", false);
        // What a typed client sends for "number" fields.
        velocities.put("lowest_amount_allowed", 1.0);
        velocities.put("expected_checks_per_year", 1200.0);
        MerchantsApi merchants = new MerchantsApi(partner);
        String mid = merchants.submitMerchant(json.treeToValue(app, MerchantApplication.class), null, null).getId();
        var approved = op.adminApproveMerchant(mid, new Approval()).getPayload();
        ApiClient merchant = client(publicUrl, approved.getApiKey(), tls);
        var read = merchants.getMerchant(mid, pid).getPayload();
        expect("merchant status", "approved".equals(read.getStatus().getValue()), read.getStatus());

        ObjectNode customer = (ObjectNode) json.readTree(root.resolve("examples/requests/customer.json").toFile());
        customer.put("partner_id", pid).put("merchant_id", mid);
        String token = new CustomersApi(partner)
                .createCustomer(json.treeToValue(customer, CustomerRequest.class), null, null)
                .getPayload()
                .getId();

        TransactionsApi transactions = new TransactionsApi(partner);
        ObjectNode txn = (ObjectNode) json.readTree(root.resolve("examples/requests/transaction.json").toFile());
        txn.put("partner_id", pid).put("merchant_id", mid);
        String inline = transactions.createTransaction(json.treeToValue(txn, TransactionRequest.class), null, null)
                .getPayload()
                .getId();
        ObjectNode byToken = txn.deepCopy();
        byToken.put("amount", "31.00");
        byToken.putObject("customer").put("id", token);
        String tokened = transactions.createTransaction(json.treeToValue(byToken, TransactionRequest.class), null, null)
                .getPayload()
                .getId();
        ObjectNode toVoid = txn.deepCopy();
        toVoid.put("amount", "12.00");
        String voided = transactions.createTransaction(json.treeToValue(toVoid, TransactionRequest.class), null, null)
                .getPayload()
                .getId();
        transactions.voidTransaction(voided, pid, null);

        // A refusal is the failure model, every problem with its field.
        ObjectNode bad = txn.deepCopy();
        ((ObjectNode) bad.get("customer")).put("routing_number", "123456789");
        try {
            transactions.createTransaction(json.treeToValue(bad, TransactionRequest.class), null, null);
            failures.add("refusal: a bad routing number was accepted");
        } catch (ApiException e) {
            expect("refusal status", e.getCode() == 422, e.getCode());
            Failure f = json.readValue(e.getResponseBody(), Failure.class);
            expect("refusal field", "customer.routing_number".equals(f.getErrors().get(0).getField()), f);
            expect("refusal message number", f.getErrorCode() != null, f);
        }

        // The cut-off, then settlement (debits two banking days after their effective date).
        op.adminSetClock(new ClockRequest().now(java.time.OffsetDateTime.parse("2026-11-23T18:00:00-05:00")));
        op.adminSetClock(new ClockRequest().now(java.time.OffsetDateTime.parse("2026-11-30T09:00:00-05:00")));
        TransactionView t = transactions.getTransaction(inline, pid).getPayload();
        expect("settled", "S".equals(t.getStatus().getValue()), t.getStatus());
        expect("amount", t.getAmount().compareTo(new java.math.BigDecimal(txn.get("amount").asText())) == 0,
                t.getAmount());
        transactions.reverseTransaction(inline, pid, null);

        Set<String> seen = new HashSet<>();
        for (StatusChange c : new FeedsApi(partner).getStatusChangesFromStart(pid).getPayload().getChanges()) {
            seen.add(c.getTransactionId() + " " + c.getStatus().getValue());
        }
        for (String want : List.of(inline + " A", inline + " B", inline + " S", tokened + " B", voided + " R")) {
            expect("status changes", seen.contains(want), want);
        }
        int events = new FeedsApi(merchant).listEventsFromStart().getEvents().size();
        expect("events", events >= seen.size(), events);

        var bank = new ReferenceApi(partner).getInstitution("021000021");
        expect("institution", bank.getPayload() != null, bank);

        int examples = roundTrip(json, root);
        if (!failures.isEmpty()) {
            failures.forEach(System.err::println);
            System.exit(1);
        }
        System.out.println("clients-test (java): a lifecycle through the generated client; " + examples
                + " examples through its models");
    }

    /** Every example of the document through the model it documents and back. */
    private static int roundTrip(ObjectMapper json, Path root) throws Exception {
        JsonNode doc = json.readTree(Files.readString(root.resolve("docs/openapi.json")));
        int count = 0;
        for (Iterator<Map.Entry<String, JsonNode>> paths = doc.get("paths").fields(); paths.hasNext(); ) {
            var path = paths.next();
            for (Iterator<Map.Entry<String, JsonNode>> ops = path.getValue().fields(); ops.hasNext(); ) {
                var op = ops.next();
                // Each media type with the name the generator gives an inline schema.
                String operation = op.getValue().path("operationId").asText("");
                operation = operation.isEmpty() ? "" : Character.toUpperCase(operation.charAt(0)) + operation.substring(1);
                List<Map.Entry<JsonNode, String>> media = new ArrayList<>();
                media.add(Map.entry(op.getValue().path("requestBody").path("content").path("application/json"),
                        operation + "Request"));
                for (Iterator<Map.Entry<String, JsonNode>> rs = op.getValue().path("responses").fields(); rs.hasNext(); ) {
                    var r = rs.next();
                    media.add(Map.entry(r.getValue().path("content").path("application/json"),
                            operation + r.getKey() + "Response"));
                }
                for (var entry : media) {
                    JsonNode m = entry.getKey();
                    List<JsonNode> found = new ArrayList<>();
                    if (m.has("example")) {
                        found.add(m.get("example"));
                    }
                    for (JsonNode e : m.path("examples")) {
                        if (e.has("value")) {
                            found.add(e.get("value"));
                        }
                    }
                    Class<?> model = modelOf(m.path("schema").path("$ref").asText(entry.getValue()));
                    for (JsonNode example : found) {
                        if (model != null) {
                            count++;
                            check(json, op.getKey().toUpperCase() + " " + path.getKey(), model, example);
                        }
                    }
                }
            }
        }
        for (Iterator<Map.Entry<String, JsonNode>> schemas = doc.path("components").path("schemas").fields();
                schemas.hasNext(); ) {
            var schema = schemas.next();
            Class<?> model = modelOf(schema.getKey());
            for (JsonNode example : schema.getValue().path("examples")) {
                if (model != null && example.isObject()) {
                    count++;
                    check(json, schema.getKey(), model, example);
                }
            }
        }
        return count;
    }

    private static void check(ObjectMapper json, String what, Class<?> model, JsonNode example) {
        try {
            // What the client would send: the model written as JSON text.
            JsonNode back = json.readTree(json.writeValueAsString(json.treeToValue(example, model)));
            expect(what + " example", same(example, back), example + " -> " + back);
        } catch (Exception e) {
            failures.add(what + ": example refused by " + model.getSimpleName() + ": " + e.getMessage());
        }
    }

    private static Class<?> modelOf(String ref) {
        if (ref.isEmpty()) {
            return null;
        }
        try {
            return Class.forName("ach.client.model." + ref.substring(ref.lastIndexOf('/') + 1));
        } catch (ClassNotFoundException e) {
            return null;
        }
    }

    /** Whether `back` holds `sent`: what a model adds is absent values only. */
    private static boolean same(JsonNode sent, JsonNode back) {
        if (sent.isObject()) {
            if (!back.isObject()) {
                return false;
            }
            for (Iterator<Map.Entry<String, JsonNode>> it = sent.fields(); it.hasNext(); ) {
                var e = it.next();
                if (!same(e.getValue(), back.path(e.getKey()))) {
                    return false;
                }
            }
            return true;
        }
        if (sent.isArray()) {
            if (!back.isArray() || back.size() != sent.size()) {
                return false;
            }
            for (int i = 0; i < sent.size(); i++) {
                if (!same(sent.get(i), back.get(i))) {
                    return false;
                }
            }
            return true;
        }
        if (sent.isNumber() && back.isNumber()) {
            return sent.decimalValue().compareTo(back.decimalValue()) == 0;
        }
        // An amount or count given as a numeric string may come back as the same
        // number (a generated anyOf of number and string tries the number first):
        // the API reads `"1000.00"` and `1000.00` alike.
        if (sent.isTextual() && back.isNumber() && sent.asText().matches("[0-9]+(\\.[0-9]+)?")) {
            return new java.math.BigDecimal(sent.asText()).compareTo(back.decimalValue()) == 0;
        }
        if (sent.isNull()) {
            return back.isNull() || back.isMissingNode();
        }
        return sent.equals(back);
    }
}
