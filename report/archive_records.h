/* The OTF2 3.0.2 records the compensated archive copies one to one
 * (write_archive.c, end of the report's run, normal context), as X-macro
 * lists: X(Kind, (, parameters after the record's own), (, their names)).
 * Taken from OTF2_EvtReaderCallbacks.h and OTF2_GlobalDefReaderCallbacks.h,
 * every record kind but those write_archive.c copies itself (BufferFlush,
 * whose stop time moves with the event's, and ClockProperties, whose
 * offset and length follow the moved times) and the Unknown callbacks:
 * listing every kind, not only those adaptrace writes, makes the copy
 * complete for any archive; a kind missing here would be skipped by the
 * reader, which the copy's count of records read and written catches. */
#ifndef ADT_REPORT_ARCHIVE_RECORDS_H
#define ADT_REPORT_ARCHIVE_RECORDS_H

/* Events: after (location, time, position, user data, attribute list). */
#define ADT_ARCHIVE_EVENTS(X) \
    X(MeasurementOnOff, (, OTF2_MeasurementMode measurementMode), (, measurementMode)) \
    X(Enter, (, OTF2_RegionRef region), (, region)) \
    X(Leave, (, OTF2_RegionRef region), (, region)) \
    X(MpiSend, (, uint32_t receiver, OTF2_CommRef communicator, uint32_t msgTag, uint64_t msgLength), (, receiver, communicator, msgTag, msgLength)) \
    X(MpiIsend, (, uint32_t receiver, OTF2_CommRef communicator, uint32_t msgTag, uint64_t msgLength, uint64_t requestID), (, receiver, communicator, msgTag, msgLength, requestID)) \
    X(MpiIsendComplete, (, uint64_t requestID), (, requestID)) \
    X(MpiIrecvRequest, (, uint64_t requestID), (, requestID)) \
    X(MpiRecv, (, uint32_t sender, OTF2_CommRef communicator, uint32_t msgTag, uint64_t msgLength), (, sender, communicator, msgTag, msgLength)) \
    X(MpiIrecv, (, uint32_t sender, OTF2_CommRef communicator, uint32_t msgTag, uint64_t msgLength, uint64_t requestID), (, sender, communicator, msgTag, msgLength, requestID)) \
    X(MpiRequestTest, (, uint64_t requestID), (, requestID)) \
    X(MpiRequestCancelled, (, uint64_t requestID), (, requestID)) \
    X(MpiCollectiveBegin, (), ()) \
    X(MpiCollectiveEnd, (, OTF2_CollectiveOp collectiveOp, OTF2_CommRef communicator, uint32_t root, uint64_t sizeSent, uint64_t sizeReceived), (, collectiveOp, communicator, root, sizeSent, sizeReceived)) \
    X(OmpFork, (, uint32_t numberOfRequestedThreads), (, numberOfRequestedThreads)) \
    X(OmpJoin, (), ()) \
    X(OmpAcquireLock, (, uint32_t lockID, uint32_t acquisitionOrder), (, lockID, acquisitionOrder)) \
    X(OmpReleaseLock, (, uint32_t lockID, uint32_t acquisitionOrder), (, lockID, acquisitionOrder)) \
    X(OmpTaskCreate, (, uint64_t taskID), (, taskID)) \
    X(OmpTaskSwitch, (, uint64_t taskID), (, taskID)) \
    X(OmpTaskComplete, (, uint64_t taskID), (, taskID)) \
    X(Metric, (, OTF2_MetricRef metric, uint8_t numberOfMetrics, const OTF2_Type* typeIDs, const OTF2_MetricValue* metricValues), (, metric, numberOfMetrics, typeIDs, metricValues)) \
    X(ParameterString, (, OTF2_ParameterRef parameter, OTF2_StringRef string), (, parameter, string)) \
    X(ParameterInt, (, OTF2_ParameterRef parameter, int64_t value), (, parameter, value)) \
    X(ParameterUnsignedInt, (, OTF2_ParameterRef parameter, uint64_t value), (, parameter, value)) \
    X(RmaWinCreate, (, OTF2_RmaWinRef win), (, win)) \
    X(RmaWinDestroy, (, OTF2_RmaWinRef win), (, win)) \
    X(RmaCollectiveBegin, (), ()) \
    X(RmaCollectiveEnd, (, OTF2_CollectiveOp collectiveOp, OTF2_RmaSyncLevel syncLevel, OTF2_RmaWinRef win, uint32_t root, uint64_t bytesSent, uint64_t bytesReceived), (, collectiveOp, syncLevel, win, root, bytesSent, bytesReceived)) \
    X(RmaGroupSync, (, OTF2_RmaSyncLevel syncLevel, OTF2_RmaWinRef win, OTF2_GroupRef group), (, syncLevel, win, group)) \
    X(RmaRequestLock, (, OTF2_RmaWinRef win, uint32_t remote, uint64_t lockId, OTF2_LockType lockType), (, win, remote, lockId, lockType)) \
    X(RmaAcquireLock, (, OTF2_RmaWinRef win, uint32_t remote, uint64_t lockId, OTF2_LockType lockType), (, win, remote, lockId, lockType)) \
    X(RmaTryLock, (, OTF2_RmaWinRef win, uint32_t remote, uint64_t lockId, OTF2_LockType lockType), (, win, remote, lockId, lockType)) \
    X(RmaReleaseLock, (, OTF2_RmaWinRef win, uint32_t remote, uint64_t lockId), (, win, remote, lockId)) \
    X(RmaSync, (, OTF2_RmaWinRef win, uint32_t remote, OTF2_RmaSyncType syncType), (, win, remote, syncType)) \
    X(RmaWaitChange, (, OTF2_RmaWinRef win), (, win)) \
    X(RmaPut, (, OTF2_RmaWinRef win, uint32_t remote, uint64_t bytes, uint64_t matchingId), (, win, remote, bytes, matchingId)) \
    X(RmaGet, (, OTF2_RmaWinRef win, uint32_t remote, uint64_t bytes, uint64_t matchingId), (, win, remote, bytes, matchingId)) \
    X(RmaAtomic, (, OTF2_RmaWinRef win, uint32_t remote, OTF2_RmaAtomicType type, uint64_t bytesSent, uint64_t bytesReceived, uint64_t matchingId), (, win, remote, type, bytesSent, bytesReceived, matchingId)) \
    X(RmaOpCompleteBlocking, (, OTF2_RmaWinRef win, uint64_t matchingId), (, win, matchingId)) \
    X(RmaOpCompleteNonBlocking, (, OTF2_RmaWinRef win, uint64_t matchingId), (, win, matchingId)) \
    X(RmaOpTest, (, OTF2_RmaWinRef win, uint64_t matchingId), (, win, matchingId)) \
    X(RmaOpCompleteRemote, (, OTF2_RmaWinRef win, uint64_t matchingId), (, win, matchingId)) \
    X(ThreadFork, (, OTF2_Paradigm model, uint32_t numberOfRequestedThreads), (, model, numberOfRequestedThreads)) \
    X(ThreadJoin, (, OTF2_Paradigm model), (, model)) \
    X(ThreadTeamBegin, (, OTF2_CommRef threadTeam), (, threadTeam)) \
    X(ThreadTeamEnd, (, OTF2_CommRef threadTeam), (, threadTeam)) \
    X(ThreadAcquireLock, (, OTF2_Paradigm model, uint32_t lockID, uint32_t acquisitionOrder), (, model, lockID, acquisitionOrder)) \
    X(ThreadReleaseLock, (, OTF2_Paradigm model, uint32_t lockID, uint32_t acquisitionOrder), (, model, lockID, acquisitionOrder)) \
    X(ThreadTaskCreate, (, OTF2_CommRef threadTeam, uint32_t creatingThread, uint32_t generationNumber), (, threadTeam, creatingThread, generationNumber)) \
    X(ThreadTaskSwitch, (, OTF2_CommRef threadTeam, uint32_t creatingThread, uint32_t generationNumber), (, threadTeam, creatingThread, generationNumber)) \
    X(ThreadTaskComplete, (, OTF2_CommRef threadTeam, uint32_t creatingThread, uint32_t generationNumber), (, threadTeam, creatingThread, generationNumber)) \
    X(ThreadCreate, (, OTF2_CommRef threadContingent, uint64_t sequenceCount), (, threadContingent, sequenceCount)) \
    X(ThreadBegin, (, OTF2_CommRef threadContingent, uint64_t sequenceCount), (, threadContingent, sequenceCount)) \
    X(ThreadWait, (, OTF2_CommRef threadContingent, uint64_t sequenceCount), (, threadContingent, sequenceCount)) \
    X(ThreadEnd, (, OTF2_CommRef threadContingent, uint64_t sequenceCount), (, threadContingent, sequenceCount)) \
    X(CallingContextEnter, (, OTF2_CallingContextRef callingContext, uint32_t unwindDistance), (, callingContext, unwindDistance)) \
    X(CallingContextLeave, (, OTF2_CallingContextRef callingContext), (, callingContext)) \
    X(CallingContextSample, (, OTF2_CallingContextRef callingContext, uint32_t unwindDistance, OTF2_InterruptGeneratorRef interruptGenerator), (, callingContext, unwindDistance, interruptGenerator)) \
    X(IoCreateHandle, (, OTF2_IoHandleRef handle, OTF2_IoAccessMode mode, OTF2_IoCreationFlag creationFlags, OTF2_IoStatusFlag statusFlags), (, handle, mode, creationFlags, statusFlags)) \
    X(IoDestroyHandle, (, OTF2_IoHandleRef handle), (, handle)) \
    X(IoDuplicateHandle, (, OTF2_IoHandleRef oldHandle, OTF2_IoHandleRef newHandle, OTF2_IoStatusFlag statusFlags), (, oldHandle, newHandle, statusFlags)) \
    X(IoSeek, (, OTF2_IoHandleRef handle, int64_t offsetRequest, OTF2_IoSeekOption whence, uint64_t offsetResult), (, handle, offsetRequest, whence, offsetResult)) \
    X(IoChangeStatusFlags, (, OTF2_IoHandleRef handle, OTF2_IoStatusFlag statusFlags), (, handle, statusFlags)) \
    X(IoDeleteFile, (, OTF2_IoParadigmRef ioParadigm, OTF2_IoFileRef file), (, ioParadigm, file)) \
    X(IoOperationBegin, (, OTF2_IoHandleRef handle, OTF2_IoOperationMode mode, OTF2_IoOperationFlag operationFlags, uint64_t bytesRequest, uint64_t matchingId), (, handle, mode, operationFlags, bytesRequest, matchingId)) \
    X(IoOperationTest, (, OTF2_IoHandleRef handle, uint64_t matchingId), (, handle, matchingId)) \
    X(IoOperationIssued, (, OTF2_IoHandleRef handle, uint64_t matchingId), (, handle, matchingId)) \
    X(IoOperationComplete, (, OTF2_IoHandleRef handle, uint64_t bytesResult, uint64_t matchingId), (, handle, bytesResult, matchingId)) \
    X(IoOperationCancelled, (, OTF2_IoHandleRef handle, uint64_t matchingId), (, handle, matchingId)) \
    X(IoAcquireLock, (, OTF2_IoHandleRef handle, OTF2_LockType lockType), (, handle, lockType)) \
    X(IoReleaseLock, (, OTF2_IoHandleRef handle, OTF2_LockType lockType), (, handle, lockType)) \
    X(IoTryLock, (, OTF2_IoHandleRef handle, OTF2_LockType lockType), (, handle, lockType)) \
    X(ProgramBegin, (, OTF2_StringRef programName, uint32_t numberOfArguments, const OTF2_StringRef* programArguments), (, programName, numberOfArguments, programArguments)) \
    X(ProgramEnd, (, int64_t exitStatus), (, exitStatus)) \
    X(NonBlockingCollectiveRequest, (, uint64_t requestID), (, requestID)) \
    X(NonBlockingCollectiveComplete, (, OTF2_CollectiveOp collectiveOp, OTF2_CommRef communicator, uint32_t root, uint64_t sizeSent, uint64_t sizeReceived, uint64_t requestID), (, collectiveOp, communicator, root, sizeSent, sizeReceived, requestID)) \
    X(CommCreate, (, OTF2_CommRef communicator), (, communicator)) \
    X(CommDestroy, (, OTF2_CommRef communicator), (, communicator))

/* Global definitions: after the user data. */
#define ADT_ARCHIVE_DEFINITIONS(X) \
    X(Paradigm, (, OTF2_Paradigm paradigm, OTF2_StringRef name, OTF2_ParadigmClass paradigmClass), (, paradigm, name, paradigmClass)) \
    X(ParadigmProperty, (, OTF2_Paradigm paradigm, OTF2_ParadigmProperty property, OTF2_Type type, OTF2_AttributeValue value), (, paradigm, property, type, value)) \
    X(IoParadigm, (, OTF2_IoParadigmRef self, OTF2_StringRef identification, OTF2_StringRef name, OTF2_IoParadigmClass ioParadigmClass, OTF2_IoParadigmFlag ioParadigmFlags, uint8_t numberOfProperties, const OTF2_IoParadigmProperty* properties, const OTF2_Type* types, const OTF2_AttributeValue* values), (, self, identification, name, ioParadigmClass, ioParadigmFlags, numberOfProperties, properties, types, values)) \
    X(String, (, OTF2_StringRef self, const char* string), (, self, string)) \
    X(Attribute, (, OTF2_AttributeRef self, OTF2_StringRef name, OTF2_StringRef description, OTF2_Type type), (, self, name, description, type)) \
    X(SystemTreeNode, (, OTF2_SystemTreeNodeRef self, OTF2_StringRef name, OTF2_StringRef className, OTF2_SystemTreeNodeRef parent), (, self, name, className, parent)) \
    X(LocationGroup, (, OTF2_LocationGroupRef self, OTF2_StringRef name, OTF2_LocationGroupType locationGroupType, OTF2_SystemTreeNodeRef systemTreeParent, OTF2_LocationGroupRef creatingLocationGroup), (, self, name, locationGroupType, systemTreeParent, creatingLocationGroup)) \
    X(Location, (, OTF2_LocationRef self, OTF2_StringRef name, OTF2_LocationType locationType, uint64_t numberOfEvents, OTF2_LocationGroupRef locationGroup), (, self, name, locationType, numberOfEvents, locationGroup)) \
    X(Region, (, OTF2_RegionRef self, OTF2_StringRef name, OTF2_StringRef canonicalName, OTF2_StringRef description, OTF2_RegionRole regionRole, OTF2_Paradigm paradigm, OTF2_RegionFlag regionFlags, OTF2_StringRef sourceFile, uint32_t beginLineNumber, uint32_t endLineNumber), (, self, name, canonicalName, description, regionRole, paradigm, regionFlags, sourceFile, beginLineNumber, endLineNumber)) \
    X(Callsite, (, OTF2_CallsiteRef self, OTF2_StringRef sourceFile, uint32_t lineNumber, OTF2_RegionRef enteredRegion, OTF2_RegionRef leftRegion), (, self, sourceFile, lineNumber, enteredRegion, leftRegion)) \
    X(Callpath, (, OTF2_CallpathRef self, OTF2_CallpathRef parent, OTF2_RegionRef region), (, self, parent, region)) \
    X(Group, (, OTF2_GroupRef self, OTF2_StringRef name, OTF2_GroupType groupType, OTF2_Paradigm paradigm, OTF2_GroupFlag groupFlags, uint32_t numberOfMembers, const uint64_t* members), (, self, name, groupType, paradigm, groupFlags, numberOfMembers, members)) \
    X(MetricMember, (, OTF2_MetricMemberRef self, OTF2_StringRef name, OTF2_StringRef description, OTF2_MetricType metricType, OTF2_MetricMode metricMode, OTF2_Type valueType, OTF2_Base base, int64_t exponent, OTF2_StringRef unit), (, self, name, description, metricType, metricMode, valueType, base, exponent, unit)) \
    X(MetricClass, (, OTF2_MetricRef self, uint8_t numberOfMetrics, const OTF2_MetricMemberRef* metricMembers, OTF2_MetricOccurrence metricOccurrence, OTF2_RecorderKind recorderKind), (, self, numberOfMetrics, metricMembers, metricOccurrence, recorderKind)) \
    X(MetricInstance, (, OTF2_MetricRef self, OTF2_MetricRef metricClass, OTF2_LocationRef recorder, OTF2_MetricScope metricScope, uint64_t scope), (, self, metricClass, recorder, metricScope, scope)) \
    X(Comm, (, OTF2_CommRef self, OTF2_StringRef name, OTF2_GroupRef group, OTF2_CommRef parent, OTF2_CommFlag flags), (, self, name, group, parent, flags)) \
    X(Parameter, (, OTF2_ParameterRef self, OTF2_StringRef name, OTF2_ParameterType parameterType), (, self, name, parameterType)) \
    X(RmaWin, (, OTF2_RmaWinRef self, OTF2_StringRef name, OTF2_CommRef comm, OTF2_RmaWinFlag flags), (, self, name, comm, flags)) \
    X(MetricClassRecorder, (, OTF2_MetricRef metric, OTF2_LocationRef recorder), (, metric, recorder)) \
    X(SystemTreeNodeProperty, (, OTF2_SystemTreeNodeRef systemTreeNode, OTF2_StringRef name, OTF2_Type type, OTF2_AttributeValue value), (, systemTreeNode, name, type, value)) \
    X(SystemTreeNodeDomain, (, OTF2_SystemTreeNodeRef systemTreeNode, OTF2_SystemTreeDomain systemTreeDomain), (, systemTreeNode, systemTreeDomain)) \
    X(LocationGroupProperty, (, OTF2_LocationGroupRef locationGroup, OTF2_StringRef name, OTF2_Type type, OTF2_AttributeValue value), (, locationGroup, name, type, value)) \
    X(LocationProperty, (, OTF2_LocationRef location, OTF2_StringRef name, OTF2_Type type, OTF2_AttributeValue value), (, location, name, type, value)) \
    X(CartDimension, (, OTF2_CartDimensionRef self, OTF2_StringRef name, uint32_t size, OTF2_CartPeriodicity cartPeriodicity), (, self, name, size, cartPeriodicity)) \
    X(CartTopology, (, OTF2_CartTopologyRef self, OTF2_StringRef name, OTF2_CommRef communicator, uint8_t numberOfDimensions, const OTF2_CartDimensionRef* cartDimensions), (, self, name, communicator, numberOfDimensions, cartDimensions)) \
    X(CartCoordinate, (, OTF2_CartTopologyRef cartTopology, uint32_t rank, uint8_t numberOfDimensions, const uint32_t* coordinates), (, cartTopology, rank, numberOfDimensions, coordinates)) \
    X(SourceCodeLocation, (, OTF2_SourceCodeLocationRef self, OTF2_StringRef file, uint32_t lineNumber), (, self, file, lineNumber)) \
    X(CallingContext, (, OTF2_CallingContextRef self, OTF2_RegionRef region, OTF2_SourceCodeLocationRef sourceCodeLocation, OTF2_CallingContextRef parent), (, self, region, sourceCodeLocation, parent)) \
    X(CallingContextProperty, (, OTF2_CallingContextRef callingContext, OTF2_StringRef name, OTF2_Type type, OTF2_AttributeValue value), (, callingContext, name, type, value)) \
    X(InterruptGenerator, (, OTF2_InterruptGeneratorRef self, OTF2_StringRef name, OTF2_InterruptGeneratorMode interruptGeneratorMode, OTF2_Base base, int64_t exponent, uint64_t period), (, self, name, interruptGeneratorMode, base, exponent, period)) \
    X(IoFileProperty, (, OTF2_IoFileRef ioFile, OTF2_StringRef name, OTF2_Type type, OTF2_AttributeValue value), (, ioFile, name, type, value)) \
    X(IoRegularFile, (, OTF2_IoFileRef self, OTF2_StringRef name, OTF2_SystemTreeNodeRef scope), (, self, name, scope)) \
    X(IoDirectory, (, OTF2_IoFileRef self, OTF2_StringRef name, OTF2_SystemTreeNodeRef scope), (, self, name, scope)) \
    X(IoHandle, (, OTF2_IoHandleRef self, OTF2_StringRef name, OTF2_IoFileRef file, OTF2_IoParadigmRef ioParadigm, OTF2_IoHandleFlag ioHandleFlags, OTF2_CommRef comm, OTF2_IoHandleRef parent), (, self, name, file, ioParadigm, ioHandleFlags, comm, parent)) \
    X(IoPreCreatedHandleState, (, OTF2_IoHandleRef ioHandle, OTF2_IoAccessMode mode, OTF2_IoStatusFlag statusFlags), (, ioHandle, mode, statusFlags)) \
    X(CallpathParameter, (, OTF2_CallpathRef callpath, OTF2_ParameterRef parameter, OTF2_Type type, OTF2_AttributeValue value), (, callpath, parameter, type, value)) \
    X(InterComm, (, OTF2_CommRef self, OTF2_StringRef name, OTF2_GroupRef groupA, OTF2_GroupRef groupB, OTF2_CommRef commonCommunicator, OTF2_CommFlag flags), (, self, name, groupA, groupB, commonCommunicator, flags))

#endif
