      *>================================================================
      *> ACHDEMO: libach from GnuCOBOL.
      *>
      *> Validates the sample transaction with ach_validate, then opens
      *> an in-memory sandbox engine, has the operator create a partner,
      *> the partner submit the sample merchant application, the
      *> operator approve it, and the partner submit the transaction:
      *> every step through ach_engine_request, the same answers as the
      *> HTTPS API. AchBuffer answers (a pointer and a size_t) are read
      *> through SET ADDRESS OF and released with ach_buffer_release.
      *>
      *> Build: cobc -x -fstatic-call achdemo.cob -L target/debug -lach
      *> Run:   ./achdemo [REQUESTS_DIR]   (default examples/requests)
      *>================================================================
       IDENTIFICATION DIVISION.
       PROGRAM-ID. ACHDEMO.

       ENVIRONMENT DIVISION.
       INPUT-OUTPUT SECTION.
       FILE-CONTROL.
           SELECT REQUEST-FILE ASSIGN TO WS-FILE-NAME
               ORGANIZATION IS LINE SEQUENTIAL
               FILE STATUS IS WS-FILE-STATUS.

       DATA DIVISION.
       FILE SECTION.
       FD  REQUEST-FILE.
       01  REQUEST-LINE              PIC X(1000).

       WORKING-STORAGE SECTION.
      *> The sample ids in examples/requests, replaced by real ones.
       01  SAMPLE-PARTNER-ID         PIC X(26)
                                     VALUE "par_0123456789abcdefghijKL".
       01  SAMPLE-MERCHANT-ID        PIC X(26)
                                     VALUE "mer_0123456789abcdefghijKL".
       01  OPERATOR-KEY              PIC X(40)
                VALUE "ok_cobol_operator_key_0123456789".

       01  WS-DIR                    PIC X(400) VALUE SPACES.
       01  WS-FILE-NAME              PIC X(512).
       01  WS-FILE-STATUS            PIC XX.
       01  WS-EOF                    PIC X VALUE "N".
       01  WS-BODY                   PIC X(16000).
       01  WS-BODY-END               PIC 9(6) COMP-5.
       01  WS-REQUEST                PIC X(20000).
       01  WS-PATH                   PIC X(64).
       01  WS-ANSWER                 PIC X(20000).
       01  WS-JUNK                   PIC X(20000).
       01  WS-REST                   PIC X(20000).
       01  WS-LEN                    PIC 9(6) COMP-5.

       01  WS-PARTNER-ID             PIC X(26).
       01  WS-PARTNER-KEY            PIC X(64).
       01  WS-MERCHANT-ID            PIC X(26).
       01  WS-TRANSACTION-ID         PIC X(26).

      *> C values: a handle (pointer), a result (uint32_t) and an
      *> AchBuffer { uint8_t *data; size_t len; }.
       01  ACH-ENGINE                USAGE POINTER.
       01  ACH-RC                    USAGE BINARY-LONG UNSIGNED.
       01  ACH-VERSION-PTR           USAGE POINTER.
       01  ACH-BUFFER.
           05  ACH-BUF-DATA          USAGE POINTER.
           05  ACH-BUF-LEN           USAGE BINARY-DOUBLE UNSIGNED.

      *> NUL-terminated strings for C.
       01  KIND-TRANSACTION          PIC X(12) VALUE Z"transaction".
       01  BAD-TRANSACTION           PIC X(64)
                VALUE Z'{"merchant_id":"mer_1","amount":"1.234"}'.
       01  ENGINE-OPTIONS            PIC X(200).

       LINKAGE SECTION.
       01  LS-TEXT                   PIC X(100000).

       PROCEDURE DIVISION.
       MAIN.
           ACCEPT WS-DIR FROM ARGUMENT-VALUE
           IF WS-DIR = SPACES
               MOVE "examples/requests" TO WS-DIR
           END-IF

           CALL "ach_version" RETURNING ACH-VERSION-PTR
           SET ADDRESS OF LS-TEXT TO ACH-VERSION-PTR
           MOVE 0 TO WS-LEN
           INSPECT LS-TEXT(1:64) TALLYING WS-LEN
               FOR CHARACTERS BEFORE INITIAL X"00"
           DISPLAY "LIBACH VERSION: " LS-TEXT(1:WS-LEN)

      *>   1. Validation without an engine: the sample, then a bad one.
           MOVE "transaction.json" TO WS-FILE-NAME
           PERFORM READ-REQUEST-FILE
           MOVE SPACES TO WS-REQUEST
           STRING WS-BODY(1:WS-BODY-END - 1) X"00"
               DELIMITED BY SIZE INTO WS-REQUEST
           PERFORM VALIDATE-TRANSACTION
           DISPLAY "VALIDATE SAMPLE: " WS-ANSWER(1:WS-LEN)

           MOVE SPACES TO WS-REQUEST
           MOVE BAD-TRANSACTION TO WS-REQUEST
           PERFORM VALIDATE-TRANSACTION
           DISPLAY "VALIDATE BAD AMOUNT: " WS-ANSWER(1:WS-LEN)

      *>   2. An engine: in memory, sandbox, with an operator key.
           MOVE SPACES TO ENGINE-OPTIONS
           STRING '{"sandbox":true,'
                  '"start":"2026-11-23T09:00:00-05:00",'
                  '"operator_key":"' FUNCTION TRIM(OPERATOR-KEY) '"}'
                  X"00" DELIMITED BY SIZE INTO ENGINE-OPTIONS
           CALL "ach_engine_open" USING BY REFERENCE ENGINE-OPTIONS
                BY REFERENCE ACH-ENGINE RETURNING ACH-RC
           PERFORM CHECK-RESULT
           DISPLAY "ENGINE OPEN: " ACH-RC

      *>   The operator creates a partner.
           MOVE SPACES TO WS-REQUEST
           STRING '{"method":"POST","path":"/admin/partners",'
                  '"api_key":"' FUNCTION TRIM(OPERATOR-KEY) '",'
                  '"body":{"name":"COBOL Savings and Loan"}}' X"00"
                  DELIMITED BY SIZE INTO WS-REQUEST
           PERFORM SEND-REQUEST
           UNSTRING WS-ANSWER DELIMITED BY '"partner_id":"'
               INTO WS-JUNK WS-REST
           UNSTRING WS-REST DELIMITED BY '"' INTO WS-PARTNER-ID
           UNSTRING WS-ANSWER DELIMITED BY '"api_key":"'
               INTO WS-JUNK WS-REST
           UNSTRING WS-REST DELIMITED BY '"' INTO WS-PARTNER-KEY
           DISPLAY "PARTNER: " WS-PARTNER-ID

      *>   The partner submits the sample merchant application.
           MOVE "merchant.json" TO WS-FILE-NAME
           PERFORM READ-REQUEST-FILE
           INSPECT WS-BODY REPLACING ALL SAMPLE-PARTNER-ID
               BY WS-PARTNER-ID
           MOVE "/merchants" TO WS-PATH
           PERFORM POST-AS-PARTNER
           UNSTRING WS-ANSWER DELIMITED BY '"id":"'
               INTO WS-JUNK WS-REST
           UNSTRING WS-REST DELIMITED BY '"' INTO WS-MERCHANT-ID
           DISPLAY "MERCHANT: " WS-MERCHANT-ID

      *>   The operator approves it.
           MOVE SPACES TO WS-REQUEST
           STRING '{"method":"POST","path":"/admin/merchants/'
                  WS-MERCHANT-ID '/approve",'
                  '"api_key":"' FUNCTION TRIM(OPERATOR-KEY) '",'
                  '"body":{}}' X"00"
                  DELIMITED BY SIZE INTO WS-REQUEST
           PERFORM SEND-REQUEST
           DISPLAY "APPROVED: " WS-ANSWER(1:WS-LEN)

      *>   The partner submits the sample transaction.
           MOVE "transaction.json" TO WS-FILE-NAME
           PERFORM READ-REQUEST-FILE
           INSPECT WS-BODY REPLACING ALL SAMPLE-PARTNER-ID
               BY WS-PARTNER-ID
           INSPECT WS-BODY REPLACING ALL SAMPLE-MERCHANT-ID
               BY WS-MERCHANT-ID
           MOVE "/transactions" TO WS-PATH
           PERFORM POST-AS-PARTNER
           DISPLAY "SUBMIT TRANSACTION: " WS-ANSWER(1:WS-LEN)
           UNSTRING WS-ANSWER DELIMITED BY '"id":"'
               INTO WS-JUNK WS-REST
           UNSTRING WS-REST DELIMITED BY '"' INTO WS-TRANSACTION-ID
           DISPLAY "TRANSACTION: " WS-TRANSACTION-ID

           CALL "ach_engine_close" USING BY VALUE ACH-ENGINE
                RETURNING OMITTED
           DISPLAY "ENGINE CLOSED"
           MOVE 0 TO RETURN-CODE
           STOP RUN.

      *> Read WS-DIR/WS-FILE-NAME into WS-BODY(1:WS-BODY-END - 1),
      *> each line without its trailing spaces.
       READ-REQUEST-FILE.
           MOVE SPACES TO WS-BODY
           MOVE 1 TO WS-BODY-END
           MOVE "N" TO WS-EOF
           MOVE SPACES TO WS-REST
           STRING FUNCTION TRIM(WS-DIR) "/" FUNCTION TRIM(WS-FILE-NAME)
               DELIMITED BY SIZE INTO WS-REST
           MOVE WS-REST TO WS-FILE-NAME
           OPEN INPUT REQUEST-FILE
           IF WS-FILE-STATUS NOT = "00"
               DISPLAY "CANNOT OPEN " FUNCTION TRIM(WS-FILE-NAME)
                   " (STATUS " WS-FILE-STATUS ")"
               MOVE 1 TO RETURN-CODE
               STOP RUN
           END-IF
           PERFORM UNTIL WS-EOF = "Y"
               READ REQUEST-FILE
                   AT END
                       MOVE "Y" TO WS-EOF
                   NOT AT END
                       STRING FUNCTION TRIM(REQUEST-LINE TRAILING)
                           DELIMITED BY SIZE
                           INTO WS-BODY WITH POINTER WS-BODY-END
               END-READ
           END-PERFORM
           CLOSE REQUEST-FILE.

      *> Validate the transaction in WS-REQUEST (NUL-terminated)
      *> without an engine; the verdict is left in WS-ANSWER(1:WS-LEN).
       VALIDATE-TRANSACTION.
           CALL "ach_validate" USING BY REFERENCE KIND-TRANSACTION
                BY REFERENCE WS-REQUEST BY REFERENCE ACH-BUFFER
                RETURNING ACH-RC
           PERFORM CHECK-RESULT
           PERFORM TAKE-ANSWER.

      *> POST WS-BODY(1:WS-BODY-END - 1) to WS-PATH with the partner's
      *> key.
       POST-AS-PARTNER.
           MOVE SPACES TO WS-REQUEST
           STRING '{"method":"POST","path":"'
                  FUNCTION TRIM(WS-PATH) '",'
                  '"api_key":"' FUNCTION TRIM(WS-PARTNER-KEY) '",'
                  '"body":' WS-BODY(1:WS-BODY-END - 1) '}' X"00"
                  DELIMITED BY SIZE INTO WS-REQUEST
           PERFORM SEND-REQUEST.

      *> Send WS-REQUEST (NUL-terminated) to the engine; the answer
      *> goes to WS-ANSWER(1:WS-LEN).
       SEND-REQUEST.
           CALL "ach_engine_request" USING BY VALUE ACH-ENGINE
                BY REFERENCE WS-REQUEST BY REFERENCE ACH-BUFFER
                RETURNING ACH-RC
           PERFORM CHECK-RESULT
           PERFORM TAKE-ANSWER.

      *> Copy the AchBuffer's bytes to WS-ANSWER and release it.
       TAKE-ANSWER.
           SET ADDRESS OF LS-TEXT TO ACH-BUF-DATA
           MOVE ACH-BUF-LEN TO WS-LEN
           MOVE SPACES TO WS-ANSWER
           MOVE LS-TEXT(1:WS-LEN) TO WS-ANSWER
           IF WS-LEN > 0 AND WS-ANSWER(WS-LEN:1) = X"0A"
               SUBTRACT 1 FROM WS-LEN
           END-IF
           CALL "ach_buffer_release" USING BY REFERENCE ACH-BUFFER
                RETURNING OMITTED.

      *> Stop with the library's detail if the last call failed.
       CHECK-RESULT.
           IF ACH-RC NOT = 0
               DISPLAY "LIBACH FAILED WITH RESULT " ACH-RC
               CALL "ach_last_error" USING BY REFERENCE ACH-BUFFER
                    RETURNING ACH-RC
               PERFORM TAKE-ANSWER
               DISPLAY "DETAIL: " WS-ANSWER(1:WS-LEN)
               MOVE 1 TO RETURN-CODE
               STOP RUN
           END-IF.
